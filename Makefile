# Almanac — `make run` serves the demo, `make test` runs the whole suite.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help install browser run test lint fmt bench clean

help:
	@echo "make run    install, start embedded PostgreSQL, load the demo, serve http://127.0.0.1:8000 (web + worker)"
	@echo "make test   install and run the whole test suite"
	@echo "make lint   ruff check + format check + makemigrations --check"
	@echo "make fmt    ruff format"
	@echo "make bench  run the benchmarks in bench/"

$(STAMP): pyproject.toml sdk/python/pyproject.toml
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "need $(PYTHON) on PATH (or: make PYTHON=/path/to/python3.11)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]" -e sdk/python
	touch $(STAMP)

install: $(STAMP)

run: install
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py demo
	$(PY) manage.py up

# The browser tests (tests/browser) drive Debian's Chromium, with CJK fonts for the Chinese
# pages; installed here when missing and possible (root with apt-get), else they are skipped.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi 'wenquanyi'; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium and CJK fonts for the browser tests (apt-get)"; \
	    { apt-get install -y -qq --no-install-recommends chromium fonts-wqy-zenhei >/dev/null 2>&1 || \
	      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends chromium fonts-wqy-zenhei >/dev/null 2>&1; }; } || \
	      echo "could not install chromium: the browser tests will be skipped"; \
	  else \
	    echo "no chromium: the browser tests will be skipped (as root: apt-get install chromium fonts-wqy-zenhei)"; \
	  fi; \
	fi

test: install browser
	$(PY) -m ruff check .
	$(PY) manage.py makemigrations --check --dry-run --verbosity 0
	$(PY) -m pytest -q

lint: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run

fmt: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: install
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) var
