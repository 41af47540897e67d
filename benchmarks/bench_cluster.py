"""A run on a dask cluster writing to a local S3 server vs to local disk, side by side, with the
client's share of the CPU; then what many tiny parts cost the client.

Starts, on this machine only: a moto S3 server on 127.0.0.1 (the ``dev`` extra), a
``dask scheduler`` and ``--workers`` single-threaded ``dask worker`` processes. Each round runs
``boggle run --backend dask --scheduler-file`` once to local disk and once to ``s3://``
(alternating, so the ratio holds on a busy machine); the client's CPU is its own (the workers
are not its children), taken from ``os.wait4``.

    python -m benchmarks.bench_cluster --dictionary enable2k --count 1000000
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SECRET = "bench-secret"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{what} did not start") from None
            time.sleep(0.1)


@contextlib.contextmanager
def services(workdir: Path, workers: int) -> Iterator[tuple[dict[str, str], Path]]:
    """(environment for the client, scheduler file) while moto and the cluster run."""
    bin_dir = Path(sys.executable).parent
    quiet: dict[str, Any] = {
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "start_new_session": True,
    }
    port = _free_port()
    env = {
        **os.environ,  # child-env: this one's, passed on to the moto server
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    sched = workdir / "scheduler.json"
    procs = [
        subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], **quiet)
    ]
    try:
        _wait_port(port, procs[0], "the moto S3 server")
        import s3fs

        s3fs.S3FileSystem(
            client_kwargs={"endpoint_url": env["AWS_ENDPOINT_URL"]}, key="bench", secret=SECRET
        ).mkdir("bench")
        scheduler = [
            str(bin_dir / "dask"),
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
        ]
        procs.append(subprocess.Popen([*scheduler, "--scheduler-file", str(sched)], env=env, **quiet))
        deadline = time.monotonic() + 60
        while not sched.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        worker = [str(bin_dir / "dask"), "worker", "--scheduler-file", str(sched), "--nthreads", "1"]
        procs += [subprocess.Popen([*worker, "--no-dashboard"], env=env, **quiet) for _ in range(workers)]
        from dask.distributed import Client

        with Client(scheduler_file=str(sched), timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield env, sched
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 15)
        for p in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(timeout=20)


def timed_run(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, the client's own CPU s, its peak RSS in kB) of one ``boggle run``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.cli", "run", *args], env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 3):
        raise SystemExit(f"boggle run {' '.join(args)} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dictionary", required=True)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--chunk-size", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--tiny-parts", type=int, nargs="*", default=[1_000, 10_000])
    args = parser.parse_args(argv)
    dictionary = str(Path(args.dictionary).absolute())
    with tempfile.TemporaryDirectory() as tmp, services(Path(tmp), args.workers) as (env, sched):
        common = ["--dictionary", dictionary, "--backend", "dask", "--scheduler-file", str(sched), "-q"]
        gen = ["configs/smoke.toml", "--count", str(args.count), "--chunk-size", str(args.chunk_size)]
        timed_run([*gen, *common, "--out", f"{tmp}/warm", "--count", "2000"], env)  # compile, caches
        results: dict[str, list[tuple[float, float, int]]] = {"local disk": [], "s3 (moto)": []}
        for r in range(args.rounds):
            for name, dest in (("local disk", f"{tmp}/run-{r}"), ("s3 (moto)", f"s3://bench/run-{r}")):
                results[name].append(timed_run([*gen, *common, "--out", dest], env))
                if not dest.startswith("s3://"):
                    shutil.rmtree(dest)
        w = sys.stdout.write
        w(f"{args.count:,} boards, chunks of {args.chunk_size:,}, {args.workers} dask workers; ")
        w(f"median of {args.rounds} alternating rounds\n")
        w(f"{'output':12s} {'wall s':>8s} {'boards/s':>10s} {'client CPU s':>13s} {'client share':>13s}\n")
        base = None
        for name, rows in results.items():
            wall = statistics.median(r[0] for r in rows)
            cpu = statistics.median(r[1] for r in rows)
            rate = args.count / wall
            base = base or rate
            w(f"{name:12s} {wall:8.1f} {rate:10,.0f} {cpu:13.1f} {cpu / wall:12.1%}  x{rate / base:.2f}\n")
        w("\nmany tiny parts (one board a part, local disk): the client's cost per part\n")
        w(f"{'parts':>8s} {'wall s':>8s} {'client CPU s':>13s} {'ms/part':>8s} {'peak RSS MB':>12s}\n")
        for n in args.tiny_parts:
            tiny = ["configs/smoke.toml", "--count", str(n), "--chunk-size", "1"]
            wall, cpu, rss = timed_run([*tiny, *common, "--out", f"{tmp}/tiny-{n}"], env)
            w(f"{n:8,d} {wall:8.1f} {cpu:13.1f} {cpu / n * 1000:8.2f} {rss / 1024:12.0f}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
