"""Ctrl-C during a Z3 call stops the command within a second.

Left alone, Z3 catches SIGINT itself while it searches: the check returns `unknown` and Python
never sees the interrupt, so a run went on with its next query (and a verdict could turn unknown).
`install()` (called by the `prove` command) turns Z3's own handling off and lets Python's handler
take the signal; the interpreter's wakeup fd tells a watcher thread, which interrupts Z3, so the
call returns at once and the main thread raises KeyboardInterrupt as for any Python code.
"""

from __future__ import annotations

import os
import signal
import threading

import z3

_INSTALLED = False


def install() -> None:
    global _INSTALLED
    if _INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    z3.set_param("ctrl_c", False)
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(read,), daemon=True, name="z3-interrupt").start()
    _INSTALLED = True


def _watch(fd: int) -> None:
    while True:
        data = os.read(fd, 64)
        if not data:
            return
        if signal.SIGINT in data:
            z3.main_ctx().interrupt()
