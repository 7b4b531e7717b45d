"""A schedule file is the user's code: while it is imported and while its functions run, what it
prints goes to stderr (stdout carries the command's own output, e.g. its JSON), and whatever it
raises -- `sys.exit`, any BaseException but Ctrl-C -- is bad input naming the user's file and line.
Importing and the concrete sampling also run under a time limit (`time_limit`), so a file that loops
is one line and exit 64, never a silent hang.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

from ringproof.errors import BadInput, RingproofError

IMPORT_SECONDS = 30.0      # importing a schedule file: it only defines functions and data
SAMPLING_SECONDS = 60.0    # a schedule's steps run on ints at the sampled points (a few hundred calls)


class _Overtime(BaseException):
    """Raised by the alarm inside the user's code; not an Exception, so no user `except` eats it."""


def shown(filename: str) -> str:
    """A file's name for a message: relative to the working directory when it lies inside it
    (`examples/matvec.py:26`), else as it is."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if rel.startswith("..") else rel


def deepest_line(err: BaseException, filename: str | None) -> str | None:
    """`file:line` of the deepest traceback frame in `filename` (the user's file), if any."""
    found, tb = None, err.__traceback__
    while tb is not None:
        if filename and tb.tb_frame.f_code.co_filename == filename:
            found = f"{shown(filename)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def problem(err: BaseException, what: str, line: str) -> BadInput:
    """The bad-input error for a BaseException the user's code raised."""
    if isinstance(err, SystemExit):
        return BadInput(f"{line}: {what} called sys.exit({err.code!r}); a schedule file must not exit")
    hint = (" (Python `if`/`and`/`or` on index values: use ite, and_, or_, not_ from ringproof)"
            if "truth value of an array" in str(err) else "")
    return BadInput(f"{line}: {what} raised {type(err).__name__}: {err}{hint}")


@contextlib.contextmanager
def contained(what: str, line, filename: str | None = None):
    """Run the user's code: its prints to stderr, its exceptions (Ctrl-C, our own errors and the
    time limit's alarm aside) as BadInput at the deepest line of `filename`, else at `line` (a
    string, or a function giving it: only an error needs it)."""
    with contextlib.redirect_stdout(sys.stderr):
        try:
            yield
        except (RingproofError, KeyboardInterrupt, _Overtime):
            raise
        except BaseException as err:    # noqa: B036 -- sys.exit, GeneratorExit, ... in user code
            raise problem(err, what, deepest_line(err, filename) or (line() if callable(line) else line)) from None


@contextlib.contextmanager
def time_limit(seconds: float, what: str, files=()):
    """Bad input when the block runs longer than `seconds` (a real-time alarm; on the main thread
    only, elsewhere no limit), naming the line of `files` (the user's) it was running. Nested
    limits: the outer one stays in force."""
    if threading.current_thread() is not threading.main_thread() or signal.getitimer(signal.ITIMER_REAL)[0]:
        yield
        return

    def ring(signum, frame):
        raise _Overtime()

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Overtime as err:
        line = next(filter(None, (deepest_line(err, f) for f in files)), None)
        raise BadInput(f"{line + ': ' if line else ''}{what} did not finish within {seconds:g} s "
                       "(an endless loop?)") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
