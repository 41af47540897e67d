# The benchmarks (make bench, make bench-NAME), reached from the Makefile. Each prints its
# figures beside their targets and ratios in one run (docs/performance.md).
include scripts/common.mk

.PHONY: bench
bench:  ## solver benchmark on ENABLE2K (figures with targets and ratios), then the C++ comparison
	$(PY) -m benchmarks.perf --dictionary $(ENABLE2K) --reference 500 --target-trie-mb 8
	$(PY) -m benchmarks.perf --dictionary $(ENABLE2K) --shape 5x5 --count 100000
	$(PY) -m benchmarks.perf --dictionary $(ENABLE2K) --shape 100x100 --count 1 --rules boggle --target-seconds 0.05
	$(MAKE) --no-print-directory -f scripts/bench.mk bench-vs-cpp

.PHONY: bench-lexicon
bench-lexicon:  ## a 3.2M-word list (tanglet:pl): cold compile time and RSS, the compile note, a 10,000-board run's RSS
	$(PY) -m benchmarks.bench_lexicon --dictionary tanglet:pl --count 10000

.PHONY: bench-vs-cpp
bench-vs-cpp:  ## our kernel vs the C++ solver (ANCHOR_DIR, default /tmp/anchor): same boards, alternating, medians; BENCH_VS_CPP_ARGS='--pairs 5 --before DIR' also times another checkout in each round
	$(PY) -m benchmarks.perf_vs_cpp --dictionary $(ENABLE2K) $(BENCH_VS_CPP_ARGS)

.PHONY: bench-prove
bench-prove:  ## boggle prove vs the C++ prover (ANCHOR_DIR, default /tmp/anchor) on the same classes: CPU s, peak RSS, ratio; recipes 3x3-2 3x3-4 3x4-corner 3x4-4 3x4-heavy 4x4 (BENCH_PROVE_ARGS='--recipe 4x4 --quick')
	$(PY) -m benchmarks.bench_prove --dictionary $(ENABLE2K) $(BENCH_PROVE_ARGS)

.PHONY: bench-verify
bench-verify:  ## readers with and without checksum verification on a 1M-board run (runs/bench-verify)
	$(PY) -m benchmarks.bench_verify --dictionary $(ENABLE2K) --count 1000000

.PHONY: bench-cluster
bench-cluster:  ## 1M boards on a 2-worker dask cluster to a local S3 server (moto) vs local disk; the client's cost per part
	$(PY) -m benchmarks.bench_cluster --dictionary $(ENABLE2K) --count 1000000

.PHONY: bench-algorithms
bench-algorithms:  ## trie vs word-driven DP vs binary search: 4x4, 6x6, 100x100 and a ~545k-word list
	$(PY) -m benchmarks.perf_algorithms --dictionary $(ENABLE2K) --big $(ENABLE2K) --big tanglet:en --big tanglet:nl

.PHONY: bench-pipeline
bench-pipeline:  ## batch pipeline: 1M new-dice boards end to end vs the kernel (alternating rounds), 1 vs 2 processes, memory
	$(PY) -m benchmarks.bench_pipeline --dictionary $(ENABLE2K) --count 1000000 --jobs 2 --no-words

.PHONY: bench-analyze
bench-analyze:  ## boggle analyze beside boggle run: 100k and 1M boards with word lists, 10M without; CPU, peak memory, ratios; then 20/60/200 small runs in one report
	$(PY) -m benchmarks.bench_analyze --dictionary $(ENABLE2K)
