"""Keep freed memory in the process for reuse (glibc; elsewhere nothing changes).

The bounded sweep allocates and frees numpy arrays of megabytes for every check of every size.
By default glibc hands each such block back to the kernel (a fresh mmap per array, a trim of the
heap's top) and faults it in again on the next allocation: a third of the sweep's time went to
page faults in system time. Two mallopt settings keep the blocks in the heap instead; the peak
memory is unchanged (the sweep's arrays are freed and reused, only not returned to the kernel).

A process-wide setting: only a process that is ours calls it (`prove`'s main, the benchmarks),
never a library function, so a program that imports ringproof keeps its own allocator settings.
"""

from __future__ import annotations

import contextlib
import ctypes

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM = 1 << 30          # never trim the heap's top below 1 GiB of free memory
_MMAP = 32 << 20         # blocks below 32 MiB (glibc's largest dynamic threshold) come from the heap


def keep_freed_memory() -> None:
    """Make this process (and the workers it forks afterwards) reuse freed blocks."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_TRIM_THRESHOLD, _TRIM)
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP)
