"""What a prover process holds: the certificate's tables built without pandas, freed arrays
given back to the system (glibc's mmap threshold fixed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.best.prove._certificate import CERTIFICATE_SCHEMA, columns_table, int64_values

REPO = Path(__file__).resolve().parent.parent


def _rows(n: int, seed: int) -> dict[str, list[object]]:
    rng = np.random.default_rng(seed)
    words = ["", "a", "qé", "streaedlp", "ßx"]

    def word() -> str:
        return str(words[int(rng.integers(len(words)))])

    def maybe(v: object) -> object:
        return None if rng.random() < 0.3 else v

    return {
        "class_id": [int(x) for x in rng.integers(0, 1 << 40, n)],
        "letters": [[word() for _ in range(int(rng.integers(0, 4)))] for _ in range(n)],
        "root_bound": [int(x) for x in rng.integers(-5, 10**6, n)],
        "status": [word() for _ in range(n)],
        "boards_scored": [int(x) for x in rng.integers(0, 100, n)],
        "nodes": [int(x) for x in rng.integers(0, 100, n)],
        "best_board": [maybe(word()) for _ in range(n)],
        "best_score": [maybe(int(rng.integers(0, 3000))) for _ in range(n)],
        "found_boards": [[word() for _ in range(int(rng.integers(0, 3)))] for _ in range(n)],
        "found_scores": [[int(x) for x in rng.integers(0, 3000, int(rng.integers(0, 3)))] for _ in range(n)],
        "seconds": [float(x) for x in rng.random(n)],
    }


@pytest.mark.parametrize(("n", "seed"), [(0, 0), (1, 1), (7, 2), (200, 3)])
def test_columns_table_equals_pyarrows_own_conversion(n: int, seed: int) -> None:
    cols = _rows(n, seed)
    table = columns_table(CERTIFICATE_SCHEMA, cols)
    table.validate(full=True)
    assert table.equals(pa.table(cols, schema=CERTIFICATE_SCHEMA))
    assert table.to_pydict() == cols


def test_int64_values_reads_every_chunk_and_slice() -> None:
    col = pa.chunked_array(
        [pa.array([1, 2, 3, 4], pa.int64()).slice(1, 2), pa.array([], pa.int64()), [7, -8]]
    )
    assert int64_values(col).tolist() == [2, 3, 7, -8]
    assert int64_values(pa.chunked_array([], pa.int64())).tolist() == []


# a finished proof, the same proof found finished, and a sample: every path that builds or
# reads a certificate table (a part, the coverage check, the boards file)
PROOF_IN_A_FRESH_PROCESS = """
import sys
from pipeline.best.prove import ProveConfig, run_prove
for out, limit in ((sys.argv[2], None), (sys.argv[2], None), (sys.argv[3], 3)):
    s = run_prove(ProveConfig(sys.argv[1], shape="2x2", threshold=6, classes="ae rst", chunk_size=2,
                              n_jobs=2, backend="threading", out=out, limit_classes=limit))
    print(f"{s.status}|{len(s.boards)}")
print("pandas" in sys.modules, "pyarrow.compute" in sys.modules)
"""


def test_a_proof_imports_neither_pandas_nor_pyarrow_compute(tiny_dict: str, tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-c", PROOF_IN_A_FRESH_PROCESS, tiny_dict, str(tmp_path / "p"), str(tmp_path / "s")],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    )
    lines = res.stdout.splitlines()
    status = [ln.split("|") for ln in lines[:3]]
    assert [s for s, _ in status] == ["complete", "already complete", "sample"], res.stdout
    assert status[0][1] != "0"  # boards were found, so the boards file has rows
    assert lines[-1] == "False False"


# RSS (MB) left after freeing 40 arrays of 1 MB allocated after a freed 8 MB one: with glibc's
# dynamic threshold the 1 MB arrays come from the heap, which keeps them; fixed, each has its own
# mapping and goes back when freed
FREED = """
import sys
import numpy as np
from pipeline.parallel import return_freed_memory
if sys.argv[1] == "fixed":
    assert return_freed_memory() and return_freed_memory()
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
big = np.ones(1 << 20); del big  # 8 MB, mmapped then freed: raises the dynamic threshold
base = rss()
small = [np.ones(1 << 17) for _ in range(40)]  # 1 MB each
keep = small[-1]; del small
print(rss() - base)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_return_freed_memory_gives_freed_arrays_back() -> None:
    def left(mode: str) -> float:
        out = subprocess.run(
            [sys.executable, "-c", FREED, mode], capture_output=True, text=True, cwd=REPO, check=True
        )
        return float(out.stdout)

    assert left("dynamic") > 30
    assert left("fixed") < 5


def test_a_prover_released_after_each_class_finds_the_same(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pipeline.best.prove.tree._builder as builder
    from pipeline.best.prove import tree as tree_mod
    from pipeline.best.prove._bounds import build_prove_trie, packed_trie
    from pipeline.best.prove._classes import bucket_masks, canonical_class_ids, class_digits, parse_buckets
    from pipeline.boards import geometry

    rows, cols, threshold = 2, 3, 20
    geo = geometry(rows, cols)
    dense = build_prove_trie(tiny, rows * cols)
    buckets = parse_buckets("ae rst", tiny.alphabet)
    masks_of = bucket_masks(buckets)
    classes = [masks_of[d] for d in class_digits(canonical_class_ids(rows, cols, 2), 2, rows * cols)]

    def run(release_bytes: int) -> tuple[list[tuple[int, int, list[tuple[bytes, int]]]], int]:
        monkeypatch.setattr(builder, "RELEASE_BYTES", release_bytes)
        # the packed trie, as a prove worker passes it, and the dense one give one prover
        prover = tree_mod.TreeProver(geo, tiny, packed_trie(dense), threshold)
        released = 0
        results = []
        for masks in classes:
            before = prover.builder._paths[0]
            out = prover.prove(masks)
            # a class keeps the arrays (the next class of its chunk reuses them)
            assert prover.builder._paths[0] is before
            prover.release()  # a chunk of one class
            released += prover.builder._paths[0] is not before
            results.append((out.root_bound, out.nodes, sorted((b.tobytes(), s) for b, s in out.found)))
        return results, released

    kept, none = run(1 << 62)
    released, every = run(0)
    # every class that built a tree released (those below T by the sum bound build none)
    assert none == 0 and 0 < every <= len(classes)
    assert released == kept and any(found for _, _, found in kept)
    assert (
        kept
        == run(1 << 62)[0]
        == [
            (o.root_bound, o.nodes, sorted((b.tobytes(), s) for b, s in o.found))
            for o in (tree_mod.TreeProver(geo, tiny, dense, threshold).prove(m) for m in classes)
        ]
    )


def test_a_worker_gives_back_its_arrays_at_the_end_of_a_chunk_not_after_each_class(
    tiny_dict: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pipeline.best.prove._worker as worker
    import pipeline.best.prove.tree._builder as builder
    from pipeline.best.prove import tree as tree_mod

    monkeypatch.setattr(builder, "RELEASE_BYTES", 0)
    seen: list[tuple[int, int]] = []  # (classes proved by then, nodes of the last tree) at each release
    proved = [0]
    prove, release = tree_mod.TreeProver.prove, tree_mod.TreeProver.release

    def counting_prove(self, masks):  # type: ignore[no-untyped-def]
        proved[0] += 1
        return prove(self, masks)

    def watched_release(self) -> None:  # type: ignore[no-untyped-def]
        seen.append((proved[0], self.builder.n_nodes))
        release(self)

    monkeypatch.setattr(tree_mod.TreeProver, "prove", counting_prove)
    monkeypatch.setattr(tree_mod.TreeProver, "release", watched_release)
    args = (tiny_dict, "2x3", "boggle", None, "ae rst")
    problem = worker.load_problem(*args)
    ids = problem.space.canonical_ids()
    assert len(ids) > 2
    table, _ = worker.prove_chunk(args, 20, 8, ids[:-1])
    table2, _ = worker.prove_chunk(args, 20, 8, ids[-1:])
    assert table.num_rows == len(ids) - 1 and table2.num_rows == 1
    # one release per chunk, after all its classes, with the last tree still in hand
    assert [n for n, _ in seen] == [len(ids) - 1, len(ids)] and seen[0][1] > 0
    assert worker._prover(args, 20, 8, "tree").builder.n_nodes == 0  # given back
