# tablejack: `make demo` runs the main job, `make test` runs the full suite.
# Both create .venv and install what they need.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint types unit bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[server,lab,dev]'
	touch $(STAMP)

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

unit: $(STAMP)
	$(BIN)/pytest -q

test: lint types unit

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
