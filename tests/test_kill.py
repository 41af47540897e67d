"""A ``kill -9`` of a job's main process, however early it comes, leaves nothing running and
nothing written: every worker of ``boggle run`` (loky and dask), ``boggle prove`` and
``boggle optimize`` (its Manager process too) is gone within 10 s, and no file under the output
directory is created, renamed or changed after the kill.

Each job runs in its own session, so its process group is its pid; the group is read from
/proc. The main process is killed at fixed times after its start, the moment its first worker
process appears ("spawned"), while a worker is still importing ("starting": it may already hold
a task but has not armed; the old watchdog then returned early and the worker solved and wrote
on for minutes), or once the workers are busy.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.parallel import lifeline
from tests.conftest import REPO, boggle_command, group_processes, job_environment, wait_group_gone

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
pytestmark = linux_only

GONE_S = 10.0  # the promise: no worker outlives its main process by more than this
START_LIMIT_S = 180.0  # for a job to reach the point where it is killed (a loaded machine)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# ---------------------------------------------------------------- what is running, what changed


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


def workers(pgid: int) -> list[int]:
    """The group's processes other than its main one and the resource trackers."""
    return [p for p in group_processes(pgid) if p != pgid and "resource_tracker" not in cmdline(p)]


def kill_group(pgid: int) -> None:
    """Clean up after a failed check."""
    for pid in group_processes(pgid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def snapshot(out: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``out``: (size, mtime_ns)."""
    found = {}
    for path in out.rglob("*") if out.exists() else ():
        try:
            st = path.lstat()
        except FileNotFoundError:
            continue
        found[str(path.relative_to(out))] = (st.st_size, st.st_mtime_ns)
    return found


def changes(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> dict[str, str]:
    return {
        name: f"{before.get(name, 'absent')} -> {after.get(name, 'absent')}"
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }


# ---------------------------------------------------------------- the jobs


def run_args(backend: str) -> Callable[[str, Path], list[str]]:
    def args(enable2k: str, out: Path) -> list[str]:
        # 1,000 chunks of 5,000 boards: about a minute of work even on a fast machine (200,000
        # boards took 2.1 s in 2026-12 and CI finished one before its 3 s kill), so it is always
        # killed mid-run
        return [
            "run",
            str(REPO / "configs" / "smoke.toml"),
            "--count",
            "5000000",
            "--chunk-size",
            "5000",
            "--n-jobs",
            "2",
            "--seed",
            "3",
            "--dictionary",
            enable2k,
            "--out",
            str(out),
            "--backend",
            backend,
            "--quiet",
        ]

    return args


def prove_args(enable2k: str, out: Path) -> list[str]:
    return [
        "prove",
        "-d",
        enable2k,
        "--shape",
        "3x3",
        "--threshold",
        "500",
        "--n-jobs",
        "2",
        "-o",
        str(out),
        "-q",
    ]


def optimize_args(enable2k: str, out: Path) -> list[str]:
    return [
        "optimize",
        str(REPO / "configs" / "optimize-4x4.toml"),
        "-d",
        enable2k,
        "--n-jobs",
        "2",
        "-o",
        str(out),
        "-q",
    ]


def part_written(pgid: int, out: Path) -> bool:
    return any(out.glob("part-*.parquet"))


def searching(pgid: int, out: Path) -> bool:
    """Both optimize workers have spent 3 s of CPU: past their imports, inside a restart
    (optimize writes its one part only at the end)."""
    busy = [p for p in workers(pgid) if "loky" in cmdline(p) and cpu_seconds(p) >= 3.0]
    return len(busy) >= 2


JOBS = {
    "run-loky": (run_args("loky"), part_written),
    "run-dask": (run_args("dask"), part_written),
    "prove": (prove_args, part_written),
    "optimize": (optimize_args, searching),
}


def kill_main_and_check(name: str, when: float | str, enable2k: str, tmp_path: Path) -> None:
    """Start job ``name``, SIGKILL its main process ``when`` (seconds after its start, or a
    point named in the module's docstring), and check that its process group is gone within
    GONE_S and its output directory unchanged since the kill."""
    make_args, busy = JOBS[name]
    out = tmp_path / "out"
    stderr = tmp_path / "stderr.txt"

    def reached() -> bool:
        if isinstance(when, float):
            return time.monotonic() - t0 >= when
        if when == "spawned":
            return bool(workers(proc.pid))
        if when == "starting":
            return any(cpu_seconds(p) >= 0.3 for p in workers(proc.pid))
        return busy(proc.pid, out)

    with stderr.open("w") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            boggle_command(*make_args(enable2k, out)),
            cwd=REPO,
            env=job_environment(),
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        while not reached():
            assert proc.poll() is None, f"{name} ended before the kill: {stderr.read_text()[-2000:]}"
            assert time.monotonic() - t0 < START_LIMIT_S, f"{name} never reached {when!r}"
            time.sleep(0.002 if when in ("spawned", "starting") else 0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)  # reaped: the kernel has already signalled its children
        before = snapshot(out)
        left = wait_group_gone(proc.pid, GONE_S)
        described = {p: cmdline(p)[:160] for p in left}
        after = snapshot(out)
    finally:
        kill_group(proc.pid)
    assert proc.returncode == -signal.SIGKILL
    assert left == [], f"alive {GONE_S:.0f} s after the main process's death: {described}"
    assert changes(before, after) == {}, "written after the main process's death"


KILL_POINTS: list[float | str] = [0.2, 0.5, 1.0, 3.0, "spawned", "starting", "busy"]
# the default run: an early death of run (loky) while its workers start, a run killed while its
# workers write parts, prove at 1 s; the rest of the matrix (CI's slow suite) covers every time
DEFAULT = {
    ("run-loky", "starting"),
    ("run-loky", "busy"),
    ("prove", 1.0),
}


def _cases() -> list[object]:
    cases: list[object] = []
    for name in JOBS:
        for when in KILL_POINTS:
            label = f"{name}-{when}s" if isinstance(when, float) else f"{name}-{when}"
            marks = [] if (name, when) in DEFAULT else [pytest.mark.slow]
            cases.append(pytest.param(name, when, id=label, marks=marks))
    return cases


@pytest.mark.integration
@pytest.mark.parametrize(("name", "when"), _cases())
def test_sigkill_of_the_main_process_leaves_no_worker_and_no_write(
    name: str, when: float | str, enable2k_path: str, tmp_path: Path
) -> None:
    if name == "run-dask":
        pytest.importorskip("distributed")
    kill_main_and_check(name, when, enable2k_path, tmp_path)


# ---------------------------------------------------------------- the lifeline itself


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def python(code: str, *args: str, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=REPO, env=job_environment(), text=True, **kwargs
    )  # type: ignore[call-overload]


def test_worker_whose_main_process_is_already_gone_exits_at_once(tmp_path: Path) -> None:
    """The main process died before its worker armed: the worker exits instead of solving and
    writing its chunk (the old watchdog returned early when the parent was already gone)."""
    solved = tmp_path / "solved"
    code = (
        "import sys\n"
        "import pipeline.runner._workers as workers\n"
        "workers.solve_chunk = lambda *a: open(sys.argv[2], 'w').write('solved and written')\n"
        "workers.watched_solve_chunk(None, None, sys.argv[3], int(sys.argv[1]))\n"
    )
    proc = python(code, str(dead_pid()), str(solved), str(tmp_path))
    assert proc.wait(timeout=60) == lifeline.ORPHAN_EXIT
    assert not solved.exists()


def test_arm_for_a_main_process_already_gone_exits_before_the_next_line(tmp_path: Path) -> None:
    after = tmp_path / "after"
    code = (
        "import os, sys\n"
        "from pipeline.parallel import lifeline\n"
        "os.environ[lifeline.ENV] = sys.argv[1]\n"
        "lifeline.arm()\n"
        "open(sys.argv[2], 'w').write('ran on')\n"
    )
    proc = python(code, str(dead_pid()), str(after))
    assert proc.wait(timeout=60) == lifeline.ORPHAN_EXIT
    assert not after.exists()


def test_arm_in_the_main_process_or_a_stranger_does_nothing() -> None:
    code = (
        "import os\n"
        "from pipeline.parallel import lifeline\n"
        "os.environ.pop(lifeline.ENV, None)\n"
        "lifeline.arm()\n"  # no main process recorded: not started by one
        "lifeline.mark_main()\n"
        "lifeline.arm()\n"  # the main process itself (threads, n_jobs=1)
        "lifeline.arm(os.getpid())\n"
        "assert lifeline._ARMED is None\n"
    )
    assert python(code).wait(timeout=60) == 0


# A child of an intermediate "main" process arms, says so, then holds the GIL in one C call
# for minutes (or sleeps, releasing it): only the kernel's signal can stop it while it holds it.
PARENT = """
import subprocess, sys, threading
from pipeline.parallel import lifeline
if sys.argv[1] == "main-thread":
    lifeline.mark_main()
else:  # workers started for a thread that may end before them: the watchdog, not the kernel
    t = threading.Thread(target=lifeline.mark_main); t.start(); t.join()
child = subprocess.Popen([sys.executable, "-c", sys.argv[2]])
print(child.pid, flush=True)
child.wait()
"""
CHILD = """
import time
from pipeline.parallel import lifeline
lifeline.arm()
print("armed", flush=True)
if {hold_gil}:
    sum(range(10**13))
else:
    while True:
        time.sleep(0.05)
"""


@pytest.mark.integration
@pytest.mark.parametrize(
    ("mode", "hold_gil"),
    [("main-thread", True), ("other-thread", False)],
    ids=["kernel-signal-while-holding-the-gil", "watchdog-fallback"],
)
def test_armed_worker_dies_with_its_main_process(mode: str, hold_gil: bool) -> None:
    if mode == "main-thread" and not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    main = python(
        PARENT, mode, CHILD.format(hold_gil=hold_gil), start_new_session=True, stdout=subprocess.PIPE
    )
    try:
        assert main.stdout is not None
        child = int(main.stdout.readline())
        assert main.stdout.readline().strip() == "armed"
        time.sleep(0.3)
        assert child in group_processes(main.pid)
        main.kill()
        main.wait(timeout=30)
        t_kill = time.monotonic()
        left = wait_group_gone(main.pid, GONE_S)
        elapsed = time.monotonic() - t_kill
    finally:
        kill_group(main.pid)
    assert left == []
    # the GIL-holding child would run for minutes unless the kernel kills it; the sleeping one
    # is seen by its watchdog within a poll (both with slack for a loaded machine)
    assert elapsed < 3.0


THREADS = """
import json, os, threading, time
import joblib
from pipeline.parallel import lifeline

def worker_pid(i):
    lifeline.arm()
    time.sleep(0.3)
    return os.getpid()

def batch():
    lifeline.mark_main()
    with joblib.parallel_config(backend="loky", n_jobs=2, initializer=lifeline.arm):
        return sorted(set(joblib.Parallel()(joblib.delayed(worker_pid)(i) for i in range(4))))

def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

got = {}
t = threading.Thread(target=lambda: got.update(first=batch()))
t.start(); t.join()
time.sleep(1.0)  # a worker killed by the exit of the thread that started it is gone by now
print(json.dumps({"first": got["first"], "alive": [p for p in got["first"] if alive(p)],
                  "second": batch()}))
"""


@pytest.mark.integration
def test_workers_outlive_the_thread_that_started_them() -> None:
    """PR_SET_PDEATHSIG fires when the parent *thread* exits: workers started for a thread that
    has ended keep serving the next batch (no BrokenProcessPool, the same processes)."""
    proc = python(THREADS, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    got = json.loads(out.splitlines()[-1])
    assert got["alive"] == got["first"]
    assert set(got["second"]) <= set(got["first"])


# Two loky workers under a command's joblib configuration, one task: one worker runs it (it
# never reaches the lifeline a real task would arm), the other never gets a task. Both must
# die with the main process: loky's workers must arm as they start.
IDLE = """
import sys, time
import joblib
{setup}

def hold(path):
    open(path, "w").close()
    time.sleep(600)

with {context}:
    joblib.Parallel()(joblib.delayed(hold)(p) for p in sys.argv[1:])
"""
CONTEXTS = {
    # optimize's: the CI failure of stop 30 (workers spawned, main killed before any restart
    # reached them, both left waiting on loky's queue)
    "optimize": (
        "from pipeline.best.optimize import OptimizeConfig\nfrom pipeline.best.optimize._run import parallel",
        "parallel(OptimizeConfig(n_jobs=2))",
    ),
    # run's and prove's
    "run-prove": ("from pipeline import parallel", 'parallel.parallel_backend("loky", 2)'),
}


@pytest.mark.integration
@pytest.mark.parametrize("command", list(CONTEXTS))
def test_loky_workers_die_with_the_main_process_before_their_first_task(command: str, tmp_path: Path) -> None:
    setup, context = CONTEXTS[command]
    started = tmp_path / "started"
    main = python(IDLE.format(setup=setup, context=context), str(started), start_new_session=True)
    try:
        deadline = time.monotonic() + START_LIMIT_S
        while not (started.exists() and len(workers(main.pid)) >= 2):
            assert main.poll() is None, "the main process ended before the kill"
            assert time.monotonic() < deadline, "the task never started"
            time.sleep(0.01)
        main.kill()
        main.wait(timeout=30)
        left = wait_group_gone(main.pid, GONE_S)
        described = {p: cmdline(p)[:160] for p in left}
    finally:
        kill_group(main.pid)
    assert left == [], f"alive {GONE_S:.0f} s after the main process's death: {described}"


PRCTL_GET = """
import ctypes, json, os
from joblib.parallel import get_active_backend
from pipeline import parallel

def death_signal():
    value = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(2, ctypes.byref(value), 0, 0, 0)  # PR_GET_PDEATHSIG
    return os.getppid(), value.value

with parallel.parallel_backend("dask", 2):
    client = get_active_backend()[0].client
    got = list(client.run(death_signal).values())  # on each worker's main thread, no task run
print(json.dumps({"main": os.getpid(), "got": got}))
"""


@pytest.mark.slow  # a LocalCluster takes about 10 s to start on a loaded machine
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_local_dask_workers_are_armed_as_they_start() -> None:
    """An idle LocalCluster worker is armed by the preload, before any task reaches it."""
    pytest.importorskip("distributed")
    proc = python(PRCTL_GET, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err[-2000:]
    got = json.loads(out.splitlines()[-1])
    assert got["got"] and all(g == [got["main"], signal.SIGKILL] for g in got["got"]), got
