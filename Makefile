# tablejack: `make demo` runs the main job, `make test` runs the full suite.
# Both create .venv and install what they need.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install warm-up demo test lint types unit quick bench clean

# pytest-xdist workers for the suite. The browser, server and database tests spend most of their
# time waiting, so on the 2-core development and CI machines four workers beat two: `make test`
# took 8 min 52 s in one process, 6 min 20 s with 2 workers, 5 min 34 s with 3 and 5 min 0 s
# with 4 (one session, other work on the machine). `make test PYTEST_WORKERS=0` runs in one
# process.
PYTEST_WORKERS ?= 4
PYTEST_PARALLEL := $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist worksteal)

install: $(STAMP)

# After the packages, the package's bytecode is written (the editable source is otherwise
# compiled on every run where PYTHONDONTWRITEBYTECODE is set, as in CI) and `tablejack warm-up`
# runs every lab command once with tiny sizes, so numba compiles the lab's kernels into its
# on-disk cache now and the first lab command (and every test worker) loads them instead of
# compiling them (docs/lab.md, "Compiled once, at install").
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[server,lab,dev]'
	$(MAKE) warm-up
	touch $(STAMP)

# Compile the bytecode and the lab's kernels again (after an edit, Python and numba recompile
# what changed on its next use anyway).
warm-up:
	$(BIN)/python -m compileall -q src
	$(BIN)/tablejack warm-up

# The demo floor: an SQLite file, a version A, a version B and a classic table with EZ Bust,
# a virtual card-reading shoe with an automated dealer, demo players with credit. It prints the
# URLs of the terminal, dealer and supervisor pages; stop it with Ctrl-C.
demo: $(STAMP)
	$(BIN)/tablejack serve --demo --db demo.sqlite --port 8000

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/lint-imports

types: $(STAMP)
	$(BIN)/mypy

# The whole suite, the slow runs (@pytest.mark.slow: property runs, simulations, kernel
# compiles, the certification, the floors of several processes) included, on $(PYTEST_WORKERS)
# workers; the ten slowest tests are listed at the end (CI's output shows where the time goes).
# Under worksteal each worker starts with its share of the slow runs (tests/conftest.py). The
# suite took 544 s for 2,128 tests on 4 workers (601 s for 2,119 at the commit before its
# waits were cut; 595 s for 2,137 a run later: other work on the machine, so no ratio):
# `PYTHONPATH=$PWD/src .venv/bin/pytest -q -n 4 --dist worksteal --durations=60`; the
# install took 65 s more, the warm-up 63 s, lint under 1 s, mypy 14 s without its cache
# (docs/performance.md, "The test suite's time").
unit: $(STAMP)
	$(BIN)/pytest -q $(PYTEST_PARALLEL) --durations=10

# The suite without the slow runs, for a quick check while working (CI runs `make test`).
quick: $(STAMP)
	$(BIN)/pytest -q $(PYTEST_PARALLEL) -m "not slow"

test: lint types unit

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
