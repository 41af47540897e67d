"""The lock of a job directory in an object store: a lease made of generations.

An object store has no flock and no rename, but it has a conditional create (a PUT with
``If-None-Match: *``: of several clients creating the same name, exactly one succeeds). The
lease is the sequence ``_lease/lease-00000001.json``, ``lease-00000002.json``, ... each
``{owner, host, pid, expires_at, ttl_s}``; the newest generation says who holds it:

* take: list ``_lease/``; none there, or the newest expired (or released): conditionally
  create the next generation; a live one held by another client is refused (exit 4), and so
  is losing the race to create (someone else took it at the same moment).
* renew (a heartbeat thread, every ``renew_s``): conditionally create the next generation
  with a new expiry, then delete the older ones. A holder whose create fails has been
  taken over (its lease expired while it was paused): it is *lost* and stops writing.
* before every commit (a part's record, the manifest) the holder checks that it still holds
  a lease with at least one renewal interval left, so a paused holder stops before its
  lease can expire and be taken over (this assumes clocks agree within that margin).
* release: one last generation with ``expires_at = 0`` (generation numbers only grow, so a
  holder that was taken over can never re-create a generation after the release).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
import uuid
from typing import Any, Protocol

from pipeline import settings
from pipeline.errors import OutputConflictError

LEASE_DIR = "_lease"
LEASE_RE = re.compile(r"^lease-(\d{8})\.json$")


class LeasedFolder(Protocol):
    """What a lease needs of the folder it guards (a :class:`~pipeline.store._location.RemoteLocation`,
    which takes its lease through this module: the protocol keeps the import one way)."""

    def names(self, folder: str = "") -> list[str]: ...
    def read_bytes(self, name: str) -> bytes: ...
    def create_bytes(self, name: str, data: bytes) -> None: ...
    def remove(self, name: str) -> None: ...


def lease_name(generation: int) -> str:
    return f"{LEASE_DIR}/lease-{generation:08d}.json"


class Lease:
    """The lease on a remote job directory, held for a ``with`` block."""

    def __init__(self, loc: LeasedFolder, *, ttl_s: float | None = None, renew_s: float | None = None):
        self.loc = loc
        self.ttl_s = float(ttl_s if ttl_s is not None else settings.get().lease_ttl)
        self.renew_s = float(renew_s if renew_s is not None else settings.get().lease_renew)
        self.owner = uuid.uuid4().hex
        self.generation = 0
        self.expires_at = 0.0
        self.lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _generations(self) -> list[int]:
        return sorted(int(m.group(1)) for n in self.loc.names(LEASE_DIR) if (m := LEASE_RE.match(n)))

    def _create(self, generation: int, expires: float | None = None) -> bool:
        expires = time.time() + self.ttl_s if expires is None else expires
        body = {
            "owner": self.owner,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "expires_at": expires,
            "ttl_s": self.ttl_s,
        }
        try:
            self.loc.create_bytes(lease_name(generation), json.dumps(body, sort_keys=True).encode())
        except FileExistsError:
            return False
        self.generation, self.expires_at = generation, expires
        return True

    def acquire(self) -> None:
        gens = self._generations()
        newest = gens[-1] if gens else 0
        if newest:
            try:
                holder: dict[str, Any] = json.loads(self.loc.read_bytes(lease_name(newest)))
            except FileNotFoundError:  # removed by its holder's renewal just now: look again
                return self.acquire()
            except ValueError:
                holder = {}
            left = float(holder.get("expires_at", 0)) - time.time()
            if left > 0:
                who = f"{holder.get('host', '?')} pid {holder.get('pid', '?')}"
                raise OutputConflictError(
                    f"output directory {self.loc} is in use by another run ({who}, lease "
                    f"{newest} live for {left:.0f} s more); wait for it or choose another --out"
                )
        if not self._create(newest + 1):
            raise OutputConflictError(
                f"output directory {self.loc} was taken by another run at the same moment; "
                "wait for it or choose another --out"
            )
        self._prune()
        self._thread = threading.Thread(target=self._heartbeat, name="boggle-lease", daemon=True)
        self._thread.start()

    def _prune(self) -> None:
        for g in self._generations():
            if g < self.generation:
                self.loc.remove(lease_name(g))

    def renew(self) -> bool:
        with self._lock:
            if self.lost:
                return False
            if not self._create(self.generation + 1):
                self.lost = f"another run took over the lease (generation {self.generation + 1})"
                return False
        # an old generation left behind costs nothing; the next renewal retries
        with contextlib.suppress(Exception):
            self._prune()
        return True

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.renew_s):
            try:
                if not self.renew():
                    return
            except Exception as exc:  # the store unreachable: check() stops the writer in time
                if time.time() > self.expires_at:
                    self.lost = f"the lease could not be renewed ({type(exc).__name__})"
                    return

    def check(self) -> None:
        """Refuse (exit 4) to commit anything unless the lease is held with a renewal interval
        to spare."""
        if self.lost is None and time.time() > self.expires_at - self.renew_s:
            self.lost = "the lease is about to expire and was not renewed"
        if self.lost is not None:
            raise OutputConflictError(
                f"output directory {self.loc}: {self.lost}; this run stopped writing (re-run to resume)"
            )

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            if self.lost:
                return
            # released: a generation that expired at once, so the next run takes over without
            # waiting, and no holder that was taken over can ever create this number again
            if self._create(self.generation + 1, expires=0.0):
                self._prune()

    def __enter__(self) -> Lease:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
