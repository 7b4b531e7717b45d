"""Ctrl-C during a Z3 call stops the command within a second.

Left alone, Z3 catches SIGINT itself while it searches: the check returns `unknown` and Python
never sees the interrupt, so a run went on with its next query (and a verdict could turn unknown).
`install()` (called by the `prove` command) turns Z3's own handling off and lets Python's handler
take the signal; the interpreter's wakeup fd tells a watcher thread, which interrupts Z3, so the
call returns at once and the main thread raises KeyboardInterrupt as for any Python code. (The
watcher is a `proofs/threads.Background`: paused around every fork, so workers fork from one thread.)

The handler also remembers that an interrupt came (`requested`): a KeyboardInterrupt raised inside
a finalizer is swallowed by Python (the solvers then stop at their next query,
`stop_if_requested`), ctypes wraps one raised while it converts an argument, and Z3 then fails with
its own "canceled" error, so the command asks, whatever it ended with, whether the user
interrupted it. (A Ctrl-C while the interpreter itself starts, before `prove` runs any code,
still gets Python's own traceback.)
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import signal
import sys
import threading

from ringproof.proofs.threads import Background

_INSTALLED = False


class _Flag:
    """A flag without a lock, for the SIGINT handler: Python may run a second handler inside the
    first at any instruction, and a lock the first held (threading.Event's) would never be released.
    Setting or reading one attribute is atomic under the interpreter's lock."""

    __slots__ = ("on",)

    def __init__(self) -> None:
        self.on = False

    def set(self) -> None:
        self.on = True

    def clear(self) -> None:
        self.on = False

    def is_set(self) -> bool:
        return self.on


_REQUESTED = _Flag()
_SECOND_EXITS = False      # the `prove` process only (`run`): a second Ctrl-C ends it at once


def requested() -> bool:
    """Did a Ctrl-C come since `install()`?"""
    return _REQUESTED.is_set()


def forget() -> None:
    """The command has answered: an interrupt it had does not stop what the process does next."""
    _REQUESTED.clear()


def stop_if_requested() -> None:
    """Raise KeyboardInterrupt if a Ctrl-C came that nothing raised (a finalizer swallowed it): the
    solvers ask before each query, so such a run stops at its next one, not at its end (a per-m
    run went on for over a minute). Outside `prove` (no `install()`), nothing is ever requested."""
    if _REQUESTED.is_set():
        raise KeyboardInterrupt


def install() -> None:
    """Route Ctrl-C as the module docstring says (once per process); forget earlier interrupts."""
    global _INSTALLED
    _REQUESTED.clear()
    if _INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    if "z3" in sys.modules:
        _z3_off(sys.modules["z3"])
    else:                   # configure z3 when something imports it: `prove --help` loads no solver
        sys.meta_path.insert(0, _Z3Hook())
    sys.unraisablehook = _unraisable
    signal.signal(signal.SIGINT, _on_sigint)
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    Background("z3-interrupt", lambda stopping: _watch(read, stopping), lambda: _poke(write)).start()
    _INSTALLED = True


def _on_sigint(signum, frame):
    """Python's own reaction to Ctrl-C, and remember it (before any code can swallow it). In the
    `prove` process a second one, while the first is still unwinding (workers stopped, the line
    printed), ends it at once with 130 and nothing more: not a KeyboardInterrupt traceback from
    whatever shutdown code it landed in."""
    if _SECOND_EXITS and _REQUESTED.is_set():
        os._exit(130)
    _REQUESTED.set()
    raise KeyboardInterrupt


def second_exits() -> None:
    """The `prove` process (not a library call, not a test calling `main`): a second Ctrl-C during
    shutdown exits 130 quietly (its workers die with it: `workers.py` sets PDEATHSIG)."""
    global _SECOND_EXITS
    _SECOND_EXITS = True


def shutting_down() -> None:
    """The command has answered and the process is ending: a Ctrl-C now exits 130 quietly."""
    if _SECOND_EXITS and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))


def _unraisable(info) -> None:
    """A Ctrl-C that lands in a finalizer cannot be raised there: remember it, print nothing (the
    command says `interrupted`). After a Ctrl-C, a finalizer's error is the interrupt's too (a Z3
    object it cut off halfway through its constructor has no context when it is freed): nothing
    either. Anything else as Python would say it."""
    if issubclass(info.exc_type, KeyboardInterrupt):
        _REQUESTED.set()
        return
    if _REQUESTED.is_set():
        return
    sys.__unraisablehook__(info)


def _z3_off(z3) -> None:
    z3.set_param("ctrl_c", False)


class _Z3Hook(importlib.abc.MetaPathFinder):
    """Turns Z3's own Ctrl-C handling off right after z3 is first imported."""

    def find_spec(self, name, path=None, target=None):
        if name != "z3":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _z3_off(module)

        spec.loader.exec_module = exec_module
        return spec


def _watch(fd: int, stopping: threading.Event) -> None:
    while not stopping.is_set():
        data = os.read(fd, 64)
        if not data:
            return
        z3 = sys.modules.get("z3")
        if signal.SIGINT in data and z3 is not None:
            z3.main_ctx().interrupt()


def _poke(fd: int) -> None:
    """Wake the watcher (a byte no signal writes) so that it sees it is asked to stop."""
    try:
        os.write(fd, b"\0")
    except BlockingIOError:     # the pipe is full: the watcher has bytes to read and wakes anyway
        pass
