"""Keep freed memory in the process for reuse (glibc; elsewhere nothing changes), and collect
cyclic garbage less often.

The bounded sweep allocates and frees numpy arrays of megabytes for every check of every size.
By default glibc hands each such block back to the kernel (a fresh mmap per array, a trim of the
heap's top) and faults it in again on the next allocation: a third of the sweep's time went to
page faults in system time. Two mallopt settings keep the blocks in the heap instead; the peak
memory is unchanged (the sweep's arrays are freed and reused, only not returned to the kernel).

Python's cyclic collector runs after every 700 new container objects and walks every young
object each time: sympy's import and the counter's expressions allocate millions of them, so a
proof spends a few per cent of its CPU there, in the parent and in each worker (docs/performance.md).
`collect_less` runs it after every 50,000 instead, which leaves about a quarter of that cost (and a worker skips what it inherited: `pool._work`); the
garbage it leaves for later is a few megabytes.

Process-wide settings: only a process that is ours calls them (`prove`'s main, the benchmarks),
never a library function, so a program that imports ringproof keeps its own allocator and collector settings.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_TRIM = 1 << 30          # never trim the heap's top below 1 GiB of free memory
_MMAP = 32 << 20         # blocks below 32 MiB (glibc's largest dynamic threshold) come from the heap
_YOUNG = 50_000          # new container objects between two collections of the youngest generation


def keep_freed_memory() -> None:
    """Make this process (and the workers it forks afterwards) reuse freed blocks."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_TRIM_THRESHOLD, _TRIM)
        libc.mallopt(_M_MMAP_THRESHOLD, _MMAP)


def collect_less() -> None:
    """Make this process (and the workers it forks afterwards) run the cyclic garbage collector
    less often (the module doc)."""
    gc.set_threshold(_YOUNG, 20, 20)
