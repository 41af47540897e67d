# The long experiments behind the certificates and the docs' figures (hours on 2 cores; each
# resumable: re-run to continue), reached from the Makefile as make prove-3x4 etc.
include scripts/common.mk

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

.PHONY: prove-4x4
# PROVE_4X4_OUT: where the proof lives; the open-corner recipe, the cheaper one for ours on 4x4
# (docs/performance.md, "A coarser recipe for the whole 4x4 proof")
PROVE_4X4_OUT ?= runs/prove-4x4
prove-4x4:  ## the full ENABLE2K 4x4 proof, T=3625, open-corner recipe (about 1,000 CPU-h by the estimate; resumable: re-run to continue)
	$(BIN)/boggle prove --dictionary $(ENABLE2K) --shape 4x4 --threshold 3625 \
	  --classes 'aeijou bcdfgmpqvwxz hklnrsty, corner:abcdefghijklmnopqrstuvwxyz' \
	  --n-jobs $${PROVE_JOBS:-2} --out $(PROVE_4X4_OUT)

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
	$(PY) -m benchmarks.prove_estimate runs/sample-4x4 --compare-cpu-h 23000
