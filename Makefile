# wlmon: `make up` starts it, `make test` runs the tests. Both install what they need.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up down test lint install stack bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (wlmon needs Python 3.11)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip==25.3
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The servers, built once into ~/.cache/wlmon (or $$WLMON_CACHE); ~16 min the first time.
stack: install
	$(BIN)/wlmon stack install

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: stack lint
	$(BIN)/python -m pytest -q -p no:cacheprovider; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

up: stack
	$(BIN)/wlmon up

down: install
	$(BIN)/wlmon down

bench: install
	$(BIN)/python bench/simulate.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
