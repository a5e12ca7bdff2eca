"""The tests' kit: every helper more than one test folder (or a benchmark) uses, written once.

- :mod:`tests.support.store`: the databases (an SQLite file, a PostgreSQL schema) and the
  store's small floor;
- :mod:`tests.support.floor`: the tests' floor (one seed), its tables, and speaking to it over
  REST and the WebSocket;
- :mod:`tests.support.ledger`: every cent of a floor's log accounted for;
- :mod:`tests.support.serve`: ``tablejack serve`` as a process of its own;
- :mod:`tests.support.browser`: Chromium driven by Playwright;
- :mod:`tests.support.fixtures`: the fixtures over them, loaded by ``tests/conftest.py``.

Nothing here ships in the package: ``tablejack`` holds no code only a test runs
(docs/architecture.md, "The tests' kit").
"""
