"""The kernels compiled ahead of time (pipeline.aot, pipeline.jit): taken only while they match
the sources, the same certificate as numba's JIT, numba never imported, the GIL released."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import jit
from pipeline.errors import InternalError
from tests.conftest import REPO, boggle_command, job_environment, need_data

#: Runs ``boggle`` in this interpreter, then says which kernels it used and what it imported.
REPORTING = """
import runpy, sys
sys.argv = ["boggle", *sys.argv[1:]]
try:
    runpy.run_module("pipeline.cli", run_name="__main__")
finally:
    from pipeline import jit
    seen = {m: m in sys.modules for m in ("numba", "llvmlite")}
    sys.stderr.write(f"KERNELS {jit.mode()} numba={seen['numba']} llvmlite={seen['llvmlite']}\\n")
"""


def need_built() -> None:
    ok, why = jit.built_state()
    need_data(ok, f"the ahead-of-time kernels: {why}")


def test_the_fingerprint_follows_every_byte_of_the_kernel_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = jit.kernel_sources()
    names = {str(p.relative_to(jit.PACKAGE_ROOT)) for p in sources}
    assert {
        "best/prove/tree/_build.py",
        "best/prove/tree/_eval.py",
        "best/prove/_bounds.py",
        "solve/kernels/_drive.py",
    } <= names
    assert not {"jit.py", "cli/_proving.py"} & names  # only the modules with kernels
    assert "aot.py" in names  # and the build's runs, which decide what is exported
    assert jit.fingerprint(sources) == jit.fingerprint(list(reversed(sources)))  # stable
    monkeypatch.setattr(jit, "PACKAGE_ROOT", tmp_path)
    copy = tmp_path / "k.py"
    copy.write_bytes(sources[0].read_bytes())
    before = jit.fingerprint([copy])
    copy.write_bytes(copy.read_bytes() + b"\n")
    assert jit.fingerprint([copy]) != before


def test_a_stale_or_missing_build_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = tmp_path / "_kernels_aot.json"
    monkeypatch.setattr(jit, "AOT_RECORD", record)
    assert jit.built_state() == (False, "not built (make aot)")
    record.write_text("{not json")
    assert jit.built_state() == (False, "_kernels_aot.json unreadable (make aot)")
    current = jit.fingerprint(jit.kernel_sources())
    stale = dict(current, **{"best/prove/tree/_build.py": "0" * 64})
    record.write_text(json.dumps({"exports": {}, "sources": stale}))
    assert jit.built_state() == (False, "built from other kernel sources (make aot)")
    record.write_text(json.dumps({"exports": {}, "sources": {**current, "gone.py": "0" * 64}}))
    assert jit.built_state()[0] is False  # a kernel module removed since the build
    record.write_text(json.dumps({"exports": {}, "sources": current}))
    built = jit.module_file()
    ok, why = jit.built_state()
    assert not ok  # no fingerprint of the module: an older build, taken by no process
    assert why == (
        "its extension module is missing (make aot)"
        if built is None
        else "its record has no fingerprint of the module (an older build; make aot)"
    )
    if built is not None:
        module = jit.module_fingerprint(built)
        record.write_text(json.dumps({"exports": {}, "sources": current, "module": module}))
        assert jit.built_state() == (True, "")


def _twice(x):  # a kernel the build never saw: module-level, so numba can compile it
    return 2 * x


def _calls_a_builtin_kernel(x):  # calls what numba cannot type (as a built export would be)
    return _BUILT(x)


def _BUILT(x):  # a Python callable in the kernel's globals, as a built module's export is
    return x


def test_a_kernel_not_exported_is_compiled_by_the_jit_at_its_first_call() -> None:
    stub = jit.NotExported(_twice, {"cache": False})
    assert stub(21) == 42
    assert stub(1.5) == 3.0


def test_a_kernel_that_calls_built_kernels_and_was_not_exported_says_so() -> None:
    stub = jit.NotExported(_calls_a_builtin_kernel)
    with pytest.raises(
        InternalError,
        match=r"_calls_a_builtin_kernel was not compiled ahead of time; re-run with BOGGLE_KERNELS=jit",
    ):
        stub(1)


def test_an_export_that_takes_other_types_falls_back_to_the_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def export(x: object) -> object:  # an export of int64 -> int64: refuses a float
        calls.append(x)
        if not isinstance(x, int):
            raise TypeError("no matching definition")
        return 2 * x

    monkeypatch.setattr(jit, "_exports", {f"{_twice.__module__}.{_twice.__qualname__}": ["sym"]})
    monkeypatch.setattr(jit, "_built", type("Built", (), {"sym": staticmethod(export)}))
    call = jit._exported(_twice, {"cache": False})
    assert call(4) == 8  # the export
    assert call(2.5) == 5.0  # numba's JIT
    assert calls == [4, 2.5]


def prove(out: Path, kernels: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return reporting("prove", out, kernels, *extra)


def reporting(command: str, out: Path, kernels: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``boggle COMMAND ... -q -o OUT`` under :data:`REPORTING`, with ``BOGGLE_KERNELS`` set
    unless ``kernels`` is ``default``."""
    env = job_environment()
    if kernels != "default":
        env[jit.ENV] = kernels
    return subprocess.run(
        [sys.executable, "-c", REPORTING, *boggle_command(command)[3:], *extra, "-q", "-o", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def certificate(out: Path) -> list[dict[str, object]]:
    rows = []
    for part in sorted(out.glob("part-*.parquet")):
        rows += pq.read_table(part).drop_columns(["seconds"]).to_pylist()
    return sorted(rows, key=lambda r: int(r["class_id"]))  # type: ignore[call-overload]


@pytest.mark.integration
@pytest.mark.parametrize(
    "args",
    [
        (
            "--shape",
            "3x3",
            "--threshold",
            "500",
            "--classes",
            "bdfgjqvwxz aeiou lnrsy chkmpt",
            "--limit-classes",
            "300",
        ),
        ("--shape", "3x3", "--threshold", "400", "--bound", "sumax", "--limit-classes", "60"),
        ("--shape", "3x4", "--threshold", "1500", "--limit-classes", "12"),
    ],
    ids=["3x3-4", "3x3-sumax", "3x4-corner"],
)
def test_prove_takes_the_built_kernels_and_writes_the_jits_certificate(
    args: tuple[str, ...], enable2k_path: str, tmp_path: Path
) -> None:
    """``boggle prove`` (no environment set) runs on the built module in threads, never imports
    numba, and writes the certificate the JIT writes (every column but the seconds)."""
    need_built()
    common = ("-d", enable2k_path, *args, "--sample-seed", "3", "-j", "2", "--backend", "threading")
    built = prove(tmp_path / "aot", "default", *common)
    assert built.returncode == 0, built.stderr
    assert "KERNELS aot numba=False llvmlite=False" in built.stderr
    numba = prove(tmp_path / "jit", "jit", *common)
    assert numba.returncode == 0, numba.stderr
    assert "KERNELS jit numba=True" in numba.stderr
    assert built.stdout == numba.stdout  # the BEST line
    rows = certificate(tmp_path / "aot")
    assert rows and rows == certificate(tmp_path / "jit")


def test_the_deduping_force_runs_on_the_built_kernels(enable2k_path: str) -> None:
    """Every kernel the deduping force calls from Python is exported: a split on every class,
    values from paths too (heavy 4x4 classes take both), in the ``aot`` mode, numba never
    imported (a kernel the build missed would be numba's JIT's)."""
    need_built()
    code = (
        "import sys; from pipeline import jit; jit.prefer_ahead_of_time()\n"
        "from pipeline.aot import exercise_deduping_force\n"
        f"exercise_deduping_force({enable2k_path!r})\n"
        "print(jit.mode(), 'numba' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=job_environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["aot", "False"]


def test_analyze_takes_the_built_kernels_and_writes_the_jits_tables(
    enable2k_path: str, tmp_path: Path
) -> None:
    """``boggle analyze`` (no environment set) of two paired runs (the same boards, minimum
    length 3 and 4: each run's second pass and the paired one) runs the statistics' kernels of
    the built module, never imports numba, and writes every table the JIT writes."""
    import pandas as pd

    from pipeline.runner import run_job
    from tests.conftest import gen_config

    need_built()
    runs = []
    for name, extra in (("min3", {}), ("min4", {"rules__min_length": 4})):
        run_job(
            gen_config(enable2k_path, tmp_path / name, boards__count=1000, boards__chunk_size=250, **extra)
        )
        runs.append(str(tmp_path / name))
    shown = {}
    for kernels in ("default", "jit"):
        done = reporting("analyze", tmp_path / f"report-{kernels}", kernels, *runs)
        assert done.returncode == 0, done.stderr[-2000:]
        shown[kernels] = done.stderr
    assert "KERNELS aot numba=False llvmlite=False" in shown["default"]
    assert "KERNELS jit numba=True" in shown["jit"]
    tables = sorted(p.name for p in (tmp_path / "report-jit" / "tables").glob("*.parquet"))
    assert "paired.parquet" in tables and "face_effects.parquet" in tables
    assert tables == sorted(p.name for p in (tmp_path / "report-default" / "tables").glob("*.parquet"))
    for name in tables:
        built = pd.read_parquet(tmp_path / "report-default" / "tables" / name)
        numba = pd.read_parquet(tmp_path / "report-jit" / "tables" / name)
        pd.testing.assert_frame_equal(built, numba, check_exact=False, rtol=1e-12, atol=0, obj=name)


@pytest.mark.integration
def test_a_stale_build_falls_back_to_the_jit(enable2k_path: str, tmp_path: Path) -> None:
    """An edited kernel module: the built module no longer matches it and is not taken."""
    need_built()
    env = job_environment() | {jit.ENV: "aot"}
    code = (
        "from pipeline import jit; jit.fingerprint = lambda paths: {}; "
        "import pipeline.best.prove.tree._eval; print(jit.mode(), jit.why_not_ahead_of_time())"
    )
    shown = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert shown.stdout.strip() == "jit built from other kernel sources (make aot)", shown.stderr


@pytest.mark.integration
def test_an_exported_kernel_lets_other_threads_run() -> None:
    """The exports' wrappers release the GIL (pycc's own do not, numba issue #6382): a Python
    thread counts while another thread is inside a long kernel call."""
    need_built()
    code = """
import threading, time, numpy as np
from pipeline import jit
assert jit.mode() == "aot"
from pipeline.best.prove._bounds import class_sizes
masks = np.full((200_000, 16), 3, np.uint64)
calls, stamps = [], []
def work():
    for _ in range(50):
        t0 = time.perf_counter()
        class_sizes(masks)
        calls.append((t0, time.perf_counter()))
t = threading.Thread(target=work)
t.start()
while t.is_alive():
    stamps.append(time.perf_counter())
stamps = np.array(stamps)
print(sum(int(((stamps > a) & (stamps < b)).sum()) for a, b in calls))
"""
    env = job_environment() | {jit.ENV: "aot"}
    shown = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert int(shown.stdout) > 1000, shown.stdout


def test_a_module_that_does_not_load_leaves_the_jit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Built for another numpy, say: the import fails, and the process runs the JIT, saying why."""
    for name, value in (("_mode", None), ("_why", ""), ("_built", None), ("_exports", {})):
        monkeypatch.setattr(jit, name, value)  # undone after the test: this process stays jit
    monkeypatch.setattr(jit.settings, "get", lambda: type("S", (), {"kernels": "aot"})())
    monkeypatch.setattr(jit, "built_state", lambda: (True, ""))

    def broken(path: Path | None) -> None:
        raise ImportError("numpy.core.multiarray failed to import")

    monkeypatch.setattr(jit, "_load", broken)
    assert jit.mode() == "jit"
    assert jit.why_not_ahead_of_time() == (
        "its extension module does not load (numpy.core.multiarray failed to import; make aot)"
    )
