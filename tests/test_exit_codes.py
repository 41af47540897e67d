"""Exit codes at the edges: a signal during start-up, a config that cannot be parsed, a damaged
proof part, a board file that is not a regular file, counts past their caps."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import boggle_command, job_environment

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# ---------------------------------------------------------------- a signal during start-up


def _catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler installed for ``signum`` (/proc SigCgt)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            caught = next(line.split()[1] for line in fh if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(int(caught, 16) & (1 << (signum - 1)))


@linux_only
@pytest.mark.parametrize(("signum", "code", "line"), [
    (signal.SIGTERM, 143, "terminated (SIGTERM)"), (signal.SIGINT, 130, "interrupted"),
])  # fmt: skip
def test_a_signal_during_start_up_ends_with_its_code_and_one_line(
    tmp_path: Path, signum: int, code: int, line: str
) -> None:
    """From the moment ``boggle`` takes signals (its handlers installed, before the commands are
    built and the command line parsed) to the job loop: the signal's exit code and one line."""
    for delay in (0.0, 0.05, 0.15, 0.4, 0.8):
        out = tmp_path / f"run-{delay}"
        proc = subprocess.Popen(
            boggle_command("run", "--count", "2000000", "--out", str(out)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=job_environment(),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        # SIGTERM's handler is boggle's own (Python catches SIGINT from its start); both come together
        while not _catches(proc.pid, signal.SIGTERM) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(delay)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == code, (delay, proc.returncode, stderr[-3000:])
        assert "Traceback" not in stderr, (delay, stderr[-3000:])
        lines = [ln for ln in stderr.splitlines() if not ln.startswith(("note: ", "warning: ", "solving"))]
        assert len(lines) == 1 and lines[0].startswith(line), (delay, stderr[-3000:])
