# wlmon: `make up` starts it, `make test` runs the tests. Both install what they need.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up down test lint install stack build-deps system-deps bench clean dashboard-docs

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found (wlmon needs Python 3.11)"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip==25.3
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"
	touch $(STAMP)

# The discrete-event loop (the engine of runs and of the live exporter) compiled into numba's
# cache now, not inside the first exporter's readiness timeout; ~8 s once, then ~1 s.
install: $(STAMP)
	$(BIN)/python -m landscape_model.compile_des

# Debian packages, each installed only when missing (needs root, as on CI):
# - build-deps: what `wlmon stack install` builds Perses' web UI with (Node.js, npm; curl);
# - system-deps: what the tests use besides: PostgreSQL (the real-database source),
#   Chromium (the HTML report opened headless) and chromium-driver (the browser test).
PG_BINDIR := /usr/lib/postgresql/15/bin
build-deps:
	@missing=""; command -v node >/dev/null || missing="$$missing nodejs"; \
	  command -v npm >/dev/null || missing="$$missing npm"; \
	  command -v curl >/dev/null || missing="$$missing curl"; \
	  if [ -n "$$missing" ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; fi

system-deps: build-deps
	@missing=""; test -x $(PG_BINDIR)/initdb || missing="$$missing postgresql-15"; \
	  test -x /usr/bin/chromium || missing="$$missing chromium"; \
	  test -x /usr/bin/chromedriver || missing="$$missing chromium-driver"; \
	  if [ -n "$$missing" ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; fi

# The servers, built once into ~/.cache/wlmon (or $$WLMON_CACHE); ~30 min the first time
# on an idle 2-core machine (Thanos and Perses with its web UI included; README).
stack: install build-deps
	$(BIN)/wlmon stack install

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

test: system-deps stack lint
	$(BIN)/python -m pytest -q -p no:cacheprovider --durations=30; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests"; exit 1; fi; exit $$rc

up: stack
	$(BIN)/wlmon up

down: install
	$(BIN)/wlmon down

# docs/dashboards.md: the browser test's screenshots (during a db-bottleneck run), shrunk.
dashboard-docs: stack system-deps
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/integration/test_browser.py
	$(BIN)/python -m dashboards.docs

bench: install
	$(BIN)/python bench/simulate.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
