"""Certification: the report a regulator's test lab files for a set of Rules Submissions.

``tablejack certify --rules FILE… --out DIR`` runs the clause matrix (every clause of PA 633b.16,
PA 633c.5 and NJ multi-action blackjack, :mod:`tablejack.certify.clauses`, mapped to the tests
and scenarios that prove it by the clause ids they carry, :mod:`tablejack.certify.matrix`), the
property runs (exactly-once settlement, conservation of money, replay), the shuffle statistics
(:mod:`tablejack.lab.shuffle_stats`) and the exact against simulated house edge of every wager,
and writes ``certify.json`` and ``certify.html`` (:mod:`tablejack.certify.run`). It sits above
the lab, the games and the core and below the CLI; see ``docs/certify.md``.
"""
