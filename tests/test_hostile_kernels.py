"""Issue 54, the kernels built ahead of time: the built module is fingerprinted too (its size and
SHA-256 in ``pipeline/_kernels_aot.json``), checked before it is loaded, and loaded from the very
file checked. A truncated or replaced module is never mapped (it killed ``boggle prove`` with
SIGBUS, exit 135, nothing said): the process falls back to numba's JIT, and ``boggle prove``
says why in one note.

The real build is never touched: the tests point :func:`pipeline.jit.module_file` at copies.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import jit
from tests.conftest import REPO, job_environment, need_data, tiny_proof_args


def test_the_module_is_taken_only_as_the_build_recorded_it(tmp_path: Path) -> None:
    module = tmp_path / "_kernels_aot.so"
    module.write_bytes(b"\x7fELF" + bytes(range(256)) * 64)
    recorded = jit.module_fingerprint(module)
    assert recorded["bytes"] == module.stat().st_size and len(recorded["sha256"]) == 64
    assert jit.module_state(module, recorded) == (True, "")
    whole = module.read_bytes()
    module.write_bytes(whole[: len(whole) // 2])  # truncated: what SIGBUSed
    ok, why = jit.module_state(module, recorded)
    assert not ok and "truncated or replaced" in why and f"{len(whole):,}" not in why.split("(")[0]
    module.write_bytes(bytes(reversed(whole)))  # replaced, same size
    assert jit.module_state(module, recorded)[0] is False
    assert jit.module_state(module, None) == (
        False,
        "its record has no fingerprint of the module (an older build; make aot)",
    )
    module.unlink()
    assert "unreadable" in jit.module_state(module, recorded)[1]


def test_the_built_state_checks_the_module_after_the_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tmp_path / "_kernels_aot.so"
    module.write_bytes(b"\x7fELF" + b"k" * 4096)
    record = tmp_path / "_kernels_aot.json"
    monkeypatch.setattr(jit, "AOT_RECORD", record)
    monkeypatch.setattr(jit, "module_file", lambda: module)
    sources = jit.fingerprint(jit.kernel_sources())
    record.write_text(
        json.dumps({"exports": {}, "sources": sources, "module": jit.module_fingerprint(module)})
    )
    assert jit.built_state() == (True, "")
    module.write_bytes(b"\x7fELF")
    ok, why = jit.built_state()
    assert not ok and why.startswith(
        "_kernels_aot.so is not the module the build recorded (4 bytes, 4100 recorded"
    )
    monkeypatch.setattr(jit, "module_file", lambda: None)
    assert jit.built_state() == (False, "its extension module is missing (make aot)")


# ---------------------------------------------------------------- with the real build


def _built() -> Path:
    ok, why = jit.built_state()
    need_data(ok, f"the ahead-of-time kernels: {why}")
    module = jit.module_file()
    assert module is not None
    return module


PATCHED = """
import sys
from pathlib import Path
from pipeline import jit
built = Path(sys.argv[1])
jit.module_file = lambda: built
{body}
"""


@pytest.mark.integration
def test_a_truncated_module_falls_back_to_the_jit_and_a_copy_of_the_build_loads(tmp_path: Path) -> None:
    real = _built()
    env = job_environment() | {jit.ENV: "aot"}
    body = "import pipeline.best.prove.tree._eval\nprint(jit.mode(), jit.why_not_ahead_of_time())"
    truncated = tmp_path / real.name
    truncated.write_bytes(real.read_bytes()[: real.stat().st_size // 3])
    shown = subprocess.run(
        [sys.executable, "-c", PATCHED.format(body=body), str(truncated)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr[-2000:]  # never a SIGBUS (-7)
    assert shown.stdout.startswith(f"jit {real.name} is not the module the build recorded"), shown.stdout
    assert "truncated or replaced; make aot" in shown.stdout
    copy = tmp_path / "copy" / real.name
    copy.parent.mkdir()
    copy.write_bytes(real.read_bytes())
    loaded = subprocess.run(
        [sys.executable, "-c", PATCHED.format(body=body + "\nprint(jit._built.__file__)"), str(copy)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr[-2000:]
    assert loaded.stdout.splitlines() == ["aot ", str(copy)]  # the very file that was checked


@pytest.mark.integration
def test_prove_on_a_truncated_build_says_so_in_one_note_and_proves(tmp_path: Path, tiny_dict: str) -> None:
    real = _built()
    truncated = tmp_path / real.name
    truncated.write_bytes(real.read_bytes()[:4096])
    body = (
        "import runpy\nsys.argv = ['boggle', *sys.argv[2:]]\n"
        "runpy.run_module('pipeline.cli', run_name='__main__')"
    )
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            PATCHED.format(body=body),
            str(truncated),
            *tiny_proof_args(tiny_dict, tmp_path / "p"),
            "-q",
        ],
        cwd=REPO,
        env=job_environment(),  # no BOGGLE_KERNELS: prove asks for the built kernels itself
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.startswith("BEST "), res.stdout
    notes = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(notes) == 1, res.stderr
    assert notes[0].startswith(
        f"note: the prove kernels built ahead of time are not used: {real.name} is not the module "
        "the build recorded"
    )
    assert notes[0].endswith("proving with numba's JIT")
    assert (tmp_path / "p" / "_SUCCESS").is_file()
