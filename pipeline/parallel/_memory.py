"""What a long-lived worker process holds: give freed memory back to the system.

glibc's malloc serves a request above its mmap threshold (128 KiB at start) with its own
mapping, returned to the system when freed; but each time such a block is freed it raises the
threshold to that block's size (up to 32 MiB), so later arrays of a few MB come from the heap,
and a heap keeps what it frees unless the top of it is free. A prover builds its trie, its
class list and its scratch arrays through many such temporaries: measured on ``boggle prove``
(ENABLE2K, 3x3, 4 buckets, 600 classes, 2 threads) the process ended at 388 MB with the
dynamic threshold and 298 MB with it fixed, at the same CPU. :func:`return_freed_memory`
fixes the threshold (setting it turns the adjustment off, as ``MALLOC_MMAP_THRESHOLD_`` does).
"""

from __future__ import annotations

import sys

#: mallopt's parameter numbers (glibc's malloc.h) and the threshold glibc starts with
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
THRESHOLD = 128 * 1024

_DONE = False


def return_freed_memory() -> bool:
    """Fix glibc's mmap threshold (and its trim threshold) at their start values for this
    process, so freed arrays go back to the system; once per process. False where there is no
    glibc (other systems, musl): nothing is changed there."""
    global _DONE
    if _DONE:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _DONE = mallopt(M_MMAP_THRESHOLD, THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, THRESHOLD) == 1
    return _DONE
