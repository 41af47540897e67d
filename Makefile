# One place for every routine command. `make setup` once, then `make analyze` / `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
ENABLE2K ?= enable2k
CONFIG ?= configs/default.toml

.PHONY: setup lexicon test test-integration test-slow test-all check format format-check lint typecheck docs bench clean

setup: $(VENV)/.installed lexicon  ## create .venv and install the package with its dev extras

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

lexicon:  ## install Debian's tanglet-data (14 more languages) where apt and root are available; optional: enable2k is embedded
	@if [ -f "$${TANGLET_DATA:-/usr/share/tanglet/gamedata}/en/words" ]; then \
	  echo "tanglet-data: installed"; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  apt-get install -y -qq tanglet-data >/dev/null || echo "note: apt-get install tanglet-data failed; the embedded enable2k is used by default"; \
	elif command -v apt-get >/dev/null 2>&1 && sudo -n true 2>/dev/null; then \
	  sudo apt-get install -y -qq tanglet-data >/dev/null || echo "note: apt-get install tanglet-data failed; the embedded enable2k is used by default"; \
	else \
	  echo "note: tanglet-data (tanglet:<lang> word lists) not installed: needs apt and root; the embedded enable2k is the default"; \
	fi

# the default suite runs on this many pytest-xdist processes (the integration and slow checks
# stay serial: they time real processes and signals)
TEST_WORKERS ?= 2

test:  ## the default suite: unit tests and a few end-to-end smoke runs (tests/test_smoke.py), on 2 processes: about 2 minutes
	$(PY) -m pytest -q -n $(TEST_WORKERS)

test-integration:  ## end to end with real processes: killed jobs, big runs, dask, S3 (moto), the notebook, a browser
	$(PY) -m pytest -q -m "integration and not slow"

test-slow:  ## only the slow checks (the ENABLE2K 3x3 proof, the 4x4 optimum, more cases of each check): CI runs them
	$(PY) -m pytest -q -m slow

test-all:  ## every test: the default suite, the integration and the slow checks
	$(PY) -m pytest -q -m ""

format:
	$(BIN)/ruff format pipeline tests docs/_hooks
	$(BIN)/ruff check --fix pipeline tests docs/_hooks

format-check:
	$(BIN)/ruff format --check pipeline tests docs/_hooks

lint:  ## ruff, and the import contract of pyproject.toml ([tool.importlinter])
	$(BIN)/ruff check pipeline tests docs/_hooks
	$(BIN)/lint-imports

typecheck:
	$(BIN)/mypy

docs:  ## the documentation site (mkdocs.yml, docs/) into site/; --strict: a warning (a broken link) fails
	$(BIN)/mkdocs build --strict --site-dir site

check: format-check lint typecheck test  ## everything CI checks

bench:  ## solver benchmark on ENABLE2K (figures with targets and ratios), then the C++ comparison
	$(PY) -m pipeline.benches.perf --dictionary $(ENABLE2K) --reference 500 --target-trie-mb 8
	$(PY) -m pipeline.benches.perf --dictionary $(ENABLE2K) --shape 5x5 --count 100000
	$(PY) -m pipeline.benches.perf --dictionary $(ENABLE2K) --shape 100x100 --count 1 --rules boggle --target-seconds 0.05
	$(MAKE) --no-print-directory bench-vs-cpp

.PHONY: bench-lexicon
bench-lexicon:  ## a 3.2M-word list (tanglet:pl): cold compile time and RSS, the compile note, a 10,000-board run's RSS
	$(PY) -m pipeline.benches.bench_lexicon --dictionary tanglet:pl --count 10000

.PHONY: bench-vs-cpp
bench-vs-cpp:  ## our kernel vs the C++ solver (ANCHOR_DIR, default /tmp/anchor): same boards, alternating, medians
	$(PY) -m pipeline.benches.perf_vs_cpp --dictionary $(ENABLE2K)

.PHONY: bench-prove
bench-prove:  ## boggle prove vs the C++ prover (ANCHOR_DIR, default /tmp/anchor) on the same classes: CPU s, peak RSS, ratio
	$(PY) -m pipeline.benches.bench_prove --dictionary $(ENABLE2K) $(BENCH_PROVE_ARGS)

.PHONY: bench-verify
bench-verify:  ## readers with and without checksum verification on a 1M-board run (runs/bench-verify)
	$(PY) -m pipeline.benches.bench_verify --dictionary $(ENABLE2K) --count 1000000

.PHONY: bench-cluster
bench-cluster:  ## 1M boards on a 2-worker dask cluster to a local S3 server (moto) vs local disk; the client's cost per part
	$(PY) -m pipeline.benches.bench_cluster --dictionary $(ENABLE2K) --count 1000000

.PHONY: bench-algorithms
bench-algorithms:  ## trie vs word-driven DP vs binary search: 4x4, 6x6, 100x100 and a ~545k-word list
	$(PY) -m pipeline.benches.perf_algorithms --dictionary $(ENABLE2K) --big $(ENABLE2K) --big tanglet:en --big tanglet:nl

RUN_DIR ?= runs/$(basename $(notdir $(CONFIG)))
REPORT_DIR ?= reports/$(basename $(notdir $(CONFIG)))
.PHONY: analyze
# Each stage is skipped when done: `boggle run` does nothing for a finished run (it resumes an
# interrupted one), and the analysis reruns only when the run's _SUCCESS is newer than the report.
analyze: setup  ## generate, solve and analyse $(CONFIG) into $(RUN_DIR) and $(REPORT_DIR)/report.html
	$(BIN)/boggle run $(CONFIG) --out $(RUN_DIR)
	@if [ $(REPORT_DIR)/report.html -nt $(RUN_DIR)/_SUCCESS ]; then \
	  echo "$(REPORT_DIR) is up to date with $(RUN_DIR)"; \
	  echo "report: $(abspath $(REPORT_DIR))/report.html"; \
	else \
	  $(BIN)/boggle analyze $(RUN_DIR) --out $(REPORT_DIR); \
	fi

.PHONY: notebook
# The notebook reads $(RUN_DIR) (BOGGLE_RUN_DIR), made or brought up to date by `make analyze`;
# outputs go to $(REPORT_DIR)/board_quality.ipynb, so the committed notebook stays output-free.
notebook: analyze $(VENV)/.notebook  ## run $(CONFIG) if needed, then execute notebooks/board_quality.ipynb on it
	BOGGLE_RUN_DIR=$(abspath $(RUN_DIR)) $(BIN)/jupyter execute notebooks/board_quality.ipynb \
	  --output=$(abspath $(REPORT_DIR))/board_quality.ipynb
	@echo "notebook: $(abspath $(REPORT_DIR))/board_quality.ipynb"

$(VENV)/.notebook: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[notebook]'
	touch $@

.PHONY: bench-pipeline
bench-pipeline:  ## batch pipeline: 1M new-dice boards end to end vs the kernel (alternating rounds), 1 vs 2 processes, memory
	$(PY) -m pipeline.benches.bench_pipeline --dictionary $(ENABLE2K) --count 1000000 --jobs 2 --no-words

.PHONY: optimize-4x4
optimize-4x4:  ## best-board search (configs/optimize-4x4.toml): 10 annealing restarts, each until 3625 or 120 s
	$(BIN)/boggle optimize configs/optimize-4x4.toml --dictionary $(ENABLE2K) --overwrite

.PHONY: prove-3x3
# PROVE_3X3_OUT: the certificate kept in the repository (certificates/README.md)
PROVE_3X3_OUT ?= certificates/3x3-enable2k
prove-3x3:  ## certify every ENABLE2K 3x3 board scoring >= 500 (resumable: re-run to continue)
	$(BIN)/boggle prove --dictionary $(ENABLE2K) --shape 3x3 --threshold 500 \
	  --classes 'bdfgjqvwxz aeiou lnrsy chkmpt' --n-jobs 2 --out $(PROVE_3X3_OUT)

.PHONY: prove-3x4
# PROVE_3X4_OUT: the certificate kept in the repository (certificates/README.md); resumes from any clone
PROVE_3X4_OUT ?= certificates/3x4-enable2k
prove-3x4:  ## the full ENABLE2K 3x4 proof, T=1500 (hours on 2 cores; resumable: re-run to continue)
	$(BIN)/boggle prove --dictionary $(ENABLE2K) --shape 3x4 --threshold 1500 \
	  --classes 'aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz' \
	  --n-jobs $${PROVE_JOBS:-2} --out $(PROVE_3X4_OUT)

.PHONY: sample-4x4
sample-4x4:  ## prove 320 random ENABLE2K 4x4 classes at T=3625 (corner recipe; resumable): the sample behind the full 4x4 proof's cost
	$(BIN)/boggle prove --dictionary $(ENABLE2K) --shape 4x4 --threshold 3625 \
	  --classes 'aeijou bcdfgmpqvwxz hklnrsty, corner:aeiosuy bcdfghjklmnpqrtvwxz' \
	  --limit-classes 320 --sample-seed 21 --chunk-size 4 --n-jobs $${PROVE_JOBS:-2} --out runs/sample-4x4

.PHONY: prove-3x4-tanglet
# PROVE_OUT: where the proof lives; certificates/3x4-tanglet-LANG for one kept in the repository
PROVE_OUT ?= runs/prove-3x4-$(TANGLET)
prove-3x4-tanglet:  ## a Tanglet language's 3x4 proof (resumable): make prove-3x4-tanglet TANGLET=fr T=2664 (T: the best board boggle optimize found)
	@test -n "$(TANGLET)" -a -n "$(T)" || { echo "usage: make prove-3x4-tanglet TANGLET=fr T=2664"; exit 2; }
	$(BIN)/boggle prove --dictionary tanglet:$(TANGLET) --shape 3x4 --threshold $(T) \
	  --n-jobs $${PROVE_JOBS:-2} --out $(PROVE_OUT)

.PHONY: estimate-4x4
estimate-4x4:  ## the full 4x4 proof's CPU-hours from make sample-4x4's certificate, with a 95% bootstrap interval, against the C++'s published 23,000
	$(PY) -m pipeline.benches.prove_estimate runs/sample-4x4 --compare-cpu-h 23000

clean:
	rm -rf runs reports site .pytest_cache .mypy_cache .ruff_cache
