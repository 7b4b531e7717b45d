"""The `prove` command.

    prove TARGET [options]        verify a registered algorithm (algo1, ...) or a schedule file
    prove simulate TARGET -n N -m M
    prove report TARGET ...
    prove search / bound / balance / unroll ...
    prove --version

Exit codes: 0 all proved (or the command succeeded), 1 a property refuted, 2 a verdict unknown
(timeout, solver unknown, outside the normalized fragment), 64 bad input, 70 internal error,
130 interrupted (`ringproof.errors.Exit`). Every subcommand is a module of `SUBCOMMANDS` with
`parser()` and `main(argv, stdout, stderr) -> int` (`common.py`: what they share; `prove --help`
lists them from this table); `--debug` anywhere shows the traceback of an internal error.
"""

from __future__ import annotations

import importlib
import sys

import traceback

from ringproof.errors import Exit, RingproofError

# subcommand -> module holding its `parser()` and `main(argv, stdout, stderr) -> int`; imported only
# when used; `prove --help` lists them with the first line of each module's docstring
SUBCOMMANDS = {
    "simulate": "ringproof.proofs.cli.simulate",
    "report": "ringproof.proofs.cli.report",
    "search": "ringproof.proofs.cli.search",
    "bound": "ringproof.proofs.cli.bound",
    "balance": "ringproof.proofs.cli.balance",
    "unroll": "ringproof.proofs.cli.unroll",
    "layout": "ringproof.proofs.cli.layout",
    "conform": "ringproof.proofs.cli.conform",
}
DEFAULT = "ringproof.proofs.cli.verify"


def main(argv: list[str] | None = None, stdout=None, stderr=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    if argv[:1] == ["--version"]:
        print(f"ringproof {version()}", file=stdout)
        return Exit.OK
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    from ringproof.proofs import interrupts
    from ringproof.proofs.ring.heap import collect_less, keep_freed_memory

    interrupts.install()
    keep_freed_memory()        # the `prove` process's own allocator and collector settings,
    collect_less()             # never a library call's
    if argv and argv[0] in SUBCOMMANDS:
        module, rest = SUBCOMMANDS[argv[0]], argv[1:]
    else:
        module, rest = DEFAULT, argv
    try:
        code = importlib.import_module(module).main(rest, stdout, stderr)
        if interrupts.requested():          # a Ctrl-C that Python swallowed: nothing it gave counts
            raise KeyboardInterrupt
        return code
    except KeyboardInterrupt:
        print("prove: interrupted", file=stderr)
        return Exit.INTERRUPTED
    except Exception as err:
        if interrupts.requested():          # e.g. Z3's "canceled" after a swallowed Ctrl-C
            print("prove: interrupted", file=stderr)
            return Exit.INTERRUPTED
        return _failure(err, debug, stderr)
    finally:
        interrupts.forget()                 # a library call after the command is not interrupted


def run() -> None:
    """The command (`prove`, `ringproof`, `python -m ringproof`): `main` on the command line, then
    the process ends with its exit code once its output is flushed and its exit handlers ran,
    without tearing down every object it built (sympy's, Z3's, the sessions'), which would keep a
    user waiting after the last line. Where a thread that is not a daemon still runs (a
    library's), Python's own exit waits for it."""
    import atexit
    import os
    import threading

    from ringproof.proofs import interrupts

    interrupts.second_exits()
    try:
        code = main()
    except KeyboardInterrupt:           # a second Ctrl-C in the instant between answer and exit
        os._exit(int(Exit.INTERRUPTED))
    interrupts.shutting_down()
    if any(t is not threading.main_thread() and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):      # the reader left (`prove ... | head`), or it is closed
            pass
    os._exit(int(code))


def _failure(err: Exception, debug: bool, stderr) -> int:
    """The exit code and one line for an exception that ended a command."""
    if isinstance(err, BrokenPipeError):    # `prove ... | head`: the reader left; say nothing
        _quiet_stdout()
        return Exit.OK
    if debug and getattr(err, "exit_code", Exit.INTERNAL) == Exit.INTERNAL:   # ours to debug, not the input
        traceback.print_exception(err, file=stderr)
    if isinstance(err, RingproofError):
        print(f"prove: error: {one_line(str(err))}", file=stderr)
        return err.exit_code
    # a bug of ours: one line, exit 70 (never 1, which means refuted)
    where = "" if debug else " (run again with --debug for the traceback)"
    print(f"prove: internal error: {type(err).__name__}: {one_line(str(err))}{where}", file=stderr)
    return Exit.INTERNAL


def version() -> str:
    """`prove --version`: the installed distribution's version."""
    from importlib import metadata

    try:
        return metadata.version("ringproof")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def one_line(text: str) -> str:
    """text with line breaks and other control characters escaped: an error is one line, even
    when it quotes a user's argument or Z3's multi-line term."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _quiet_stdout():
    """After a broken pipe, point stdout at devnull so the interpreter's final flush stays quiet."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    run()
