# ECP workspace. `make run` and `make test` are the two commands that matter.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PACKAGES := packages/core packages/adapters_postgres packages/adapters_http packages/adapters_idp packages/adapters_billing
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
PYTEST_WORKERS ?= 2

.PHONY: install browser run dev-cloud test lint bench fuzz spec-map clean

install: $(STAMP)

$(STAMP): requirements-dev.txt $(foreach p,$(PACKAGES),$(p)/pyproject.toml)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(foreach p,$(PACKAGES),-e $(p)) -r requirements-dev.txt
	touch $(STAMP)

# Debian's Chromium and ChromeDriver for the browser tests (tests/browser), when not yet there.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  echo "installing Debian's chromium and chromium-driver for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; }

run: install
	$(BIN)/ecp serve

# The hosted offer on this machine, against loopback stand-ins (docs/hosted.md).
dev-cloud: install
	$(BIN)/ecp dev-cloud

# Two processes (ADR 0040); PYTEST_WORKERS=0 runs everything in one.
test: install browser lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: install
	$(BIN)/python -m pip install --quiet -r bench/requirements.txt
	@for b in bench/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

fuzz: install
	$(BIN)/python scripts/fuzz.py $(FUZZ_ARGS)

# docs/spec-map.md: spec rule → module → tests, from the `spec` markers (tests/unit/test_spec_map.py checks it)
spec-map: install
	$(BIN)/python scripts/spec_map.py --output docs/spec-map.md

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
