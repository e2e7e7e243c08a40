# ECP workspace. `make run` and `make test` are the two commands that matter.
# A uv workspace with a committed lock (ADR 0057): `make run` installs what serving needs,
# `make test` adds the dev group; each stamp skips the sync while uv.lock and pyproject.toml files
# are unchanged.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PACKAGES := packages/core packages/adapters_postgres packages/adapters_http packages/adapters_idp packages/adapters_billing packages/client
PYTEST_ARGS ?=
PYTEST_WORKERS ?= 2
# uv from PyPI, pinned: the one on PATH when it is this version, else a small venv of its own.
UV_VERSION := 0.13.9
UV_TOOL := .uv-tool
ifndef UV
UV := $(shell uv --version 2>/dev/null | grep -q '^uv $(UV_VERSION)\b' && command -v uv || echo $(UV_TOOL)/bin/uv)
endif
# Only PyPI is reached: use $(PYTHON), never a downloaded interpreter.
export UV_PYTHON_DOWNLOADS := never
SYNC := $(UV) sync --locked --python $(PYTHON)
LOCKED := uv.lock pyproject.toml $(foreach p,$(PACKAGES),$(p)/pyproject.toml) tests/plugins/ecp_example_actions/pyproject.toml
SERVE_STAMP := $(VENV)/.installed-serve
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: install install-serve lock release browser golang typescript run dev-cloud test lint bench fuzz spec-map docs clients clean

install: $(DEV_STAMP)

install-serve: $(SERVE_STAMP)

$(UV_TOOL)/bin/uv:
	$(PYTHON) -m venv $(UV_TOOL)
	$(UV_TOOL)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# After changing a dependency in any pyproject.toml: re-resolve uv.lock (commit it with the change).
lock: | $(UV)
	$(UV) lock --python $(PYTHON)

# Cut the release CHANGELOG.md prepares: two commits, the release and the record of its hash
# (docs/production.md, "Releases"; ADR 0096). `scripts/release.py check` says whether versions agree.
release: install
	$(BIN)/python scripts/release.py cut $(if $(NEXT),--next $(NEXT))

# A venv with pip in it (`.venv/bin/pip install` a plug-in, docs/actions.md); uv keeps it there.
$(BIN)/python: | $(UV)
	$(UV) venv --seed --python $(PYTHON) $(VENV)

# The server's packages only (editable), leaving any dev tools already there in place.
$(SERVE_STAMP): $(LOCKED) | $(BIN)/python
	$(SYNC) --no-default-groups --inexact
	touch $@

# Everything `make test` needs: the packages, the plug-in under test, the test and lint tools.
$(DEV_STAMP): $(LOCKED) | $(BIN)/python
	$(SYNC) --group dev
	touch $@ $(SERVE_STAMP)

# Debian's Chromium and ChromeDriver for the browser tests (the e2e tests, ADR 0036), when not yet there,
# and axe-core from npm (Debian's npm) for their accessibility checks (ADR 0080).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null && command -v npm >/dev/null || { \
	  echo "installing Debian's chromium, chromium-driver and npm for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver npm >/dev/null; }
	@$(BIN)/python scripts/fetch_axe.py

# Debian's Go and golang.org/x/mod (sumdb/note, sumdb/tlog) for the transparency log's interop test
# (tests/transparency/test_interop_go.py), when not yet there; it builds offline from /usr/share/gocode.
golang:
	@command -v go >/dev/null && [ -d /usr/share/gocode/src/golang.org/x/mod/sumdb/tlog ] || { \
	  echo "installing Debian's golang-go and golang-golang-x-mod-dev for the log's interop test"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq golang-go golang-golang-x-mod-dev >/dev/null; }

# Debian's Node.js and npm for the TypeScript client (clients/typescript), when not yet there, and
# its pinned dev dependencies from its package-lock.json (npm ci) when the lock is newer than them.
typescript:
	@command -v node >/dev/null && command -v npm >/dev/null || { \
	  echo "installing Debian's nodejs and npm for the TypeScript client"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq nodejs npm >/dev/null; }
	@[ clients/typescript/node_modules/.package-lock.json -nt clients/typescript/package-lock.json ] || \
	  (cd clients/typescript && npm ci --no-audit --no-fund)

# The client libraries' generated parts, from the OpenAPI document the server serves (docs/clients.md):
# the snapshot, then the TypeScript client's types and problem classes (openapi-typescript, pinned).
clients: install typescript
	$(BIN)/python -m ecp_http.openapi.snapshot --output clients/openapi.json
	$(BIN)/python scripts/generate_python_client.py
	cd clients/typescript && npm run --silent generate

run: install-serve
	$(BIN)/ecp serve

# The hosted offer on this machine, against loopback stand-ins (docs/hosted.md).
dev-cloud: install-serve
	$(BIN)/ecp dev-cloud

# Two processes (ADR 0040); PYTEST_WORKERS=0 runs everything in one.
test: install browser golang typescript lint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/release.py check

bench: install
	$(UV) pip install --python $(BIN)/python -r bench/requirements.txt
	@for b in bench/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

fuzz: install
	$(BIN)/python scripts/fuzz.py $(FUZZ_ARGS)

# docs/spec-map.md: spec rule → module → tests, from the `spec` markers (tests/docs/test_spec_map.py checks it)
spec-map: install
	$(BIN)/python scripts/spec_map.py --output docs/spec-map.md

# The guides as a site in build/site (MkDocs with the Material theme, ADR 0056).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) $(UV_TOOL) .pytest_cache .mypy_cache .ruff_cache .hypothesis
