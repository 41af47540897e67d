# One place for every routine command. `make setup` once, then `make analyze` / `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
ENABLE2K ?= ../shared/data/enable2k.txt
CONFIG ?= configs/default.toml

.PHONY: setup lexicon test test-all check format format-check lint typecheck bench clean

setup: $(VENV)/.installed lexicon  ## create .venv and install the package with its dev extras

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

lexicon:  ## install Debian's tanglet-data (free word lists) where apt is available
	@if [ -f /usr/share/tanglet/gamedata/en/words ]; then \
	  echo "tanglet-data: installed"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y -qq tanglet-data >/dev/null || echo "note: apt-get install tanglet-data failed; pass --dictionary PATH instead"; \
	elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  sudo apt-get install -y -qq tanglet-data >/dev/null || echo "note: apt-get install tanglet-data failed; pass --dictionary PATH instead"; \
	else \
	  echo "note: tanglet-data not installed (needs apt and root); set BOGGLE_DICTIONARY or pass --dictionary PATH"; \
	fi

test:  ## the default test suite (slow checks excluded)
	$(PY) -m pytest -q

test-all:  ## every test, the slow ones too
	$(PY) -m pytest -q -m ""

format:
	$(BIN)/ruff format pipeline tests
	$(BIN)/ruff check --fix pipeline tests

format-check:
	$(BIN)/ruff format --check pipeline tests

lint:
	$(BIN)/ruff check pipeline tests

typecheck:
	$(BIN)/mypy

check: format-check lint typecheck test  ## everything CI checks

bench:  ## solver benchmark on ENABLE2K (figures and ratios side by side)
	$(PY) -m pipeline.perf --dictionary $(ENABLE2K) --reference 500
	$(PY) -m pipeline.perf --dictionary $(ENABLE2K) --shape 5x5 --count 100000
	$(PY) -m pipeline.perf --dictionary $(ENABLE2K) --shape 100x100 --count 1 --rules boggle

clean:
	rm -rf runs reports .pytest_cache .mypy_cache .ruff_cache
