"""Keep freed memory for the next chunk: glibc's allocator settings for sampling loops.

A sampling loop allocates the same large NumPy temporaries chunk after chunk (a chunk of
32,000 outputs of five floats is 1.3 MB per temporary, and an expression makes several).
glibc serves blocks above its mmap threshold (128 KiB at first, raised as such blocks are
freed, to at most 32 MiB) with fresh mappings, and gives the top of the heap back to the
kernel as soon as more than the trim threshold (twice the mmap threshold) lies free there.
Each temporary then touches pages that the kernel must map and zero again: a page fault per
4 KiB. In one detect call on iSVT4 (StatDP's budgets) that was 17,000 minor faults and a
third of the call's CPU time; a chain of five array operations on 32,000 x 5 floats took
2.8 ms instead of 0.5 ms.

:func:`keep_freed_memory` sets the mmap threshold to 32 MiB and the trim threshold to
128 MiB, once per process (the parent when a sampling run starts, and each worker of a
process pool as it starts): blocks up to 32 MiB come from the heap and are reused, and up to
128 MiB of freed heap stays with the process instead of going back to the kernel. The peak
memory of a run does not change. It does nothing on other C libraries, when the process set
its own allocator options (``MALLOC_*_`` environment variables or ``glibc.malloc``
tunables), or with ``PRIVET_MALLOC=system`` in the environment.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "keep_freed_memory"]

MMAP_THRESHOLD = 32 << 20   # blocks below this come from the heap (glibc's dynamic maximum)
TRIM_THRESHOLD = 128 << 20  # free heap kept at the top before any is given back
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (glibc's malloc.h)
_OWN_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                 "MALLOC_MMAP_MAX_")
_done: list[bool] = []


def keep_freed_memory() -> bool:
    """Apply the settings of the module docstring once per process; whether they are in
    force (False: not glibc, the process's own settings, or ``PRIVET_MALLOC=system``)."""
    if not _done:
        _done.append(_apply())
    return _done[0]


def _apply() -> bool:
    if os.environ.get("PRIVET_MALLOC", "").strip().lower() == "system":
        return False
    if any(name in os.environ for name in _OWN_SETTINGS) or \
            "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # pragma: no cover - glibc always has it
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
