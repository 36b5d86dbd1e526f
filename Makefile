# Almanac — `make run` serves the demo, `make test` runs the whole suite.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help install run test lint fmt bench clean

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

test: install
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
