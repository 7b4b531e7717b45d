"""argparse that reports bad usage as BadInput (one line, exit 64) instead of exiting with 2."""

from __future__ import annotations

import argparse
import math

from ringproof.errors import BadInput


class ArgumentParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # argparse would print usage and exit 2, our 'unknown' code
        where = self.prog.removeprefix("prove").strip()
        raise BadInput(f"{where}: {message}" if where else message)

    def exit(self, status: int = 0, message: str | None = None):
        if status:
            raise BadInput(message.strip() if message else f"{self.prog}: bad arguments")
        if message:
            self._print_message(message)
        raise _HelpShown()

    def parse(self, argv, stdout):
        """Parse argv; `--help` prints to stdout and returns None."""
        self._out = stdout
        try:
            return self.parse_args(argv)
        except _HelpShown:
            return None

    def _print_message(self, message, file=None):
        out = getattr(self, "_out", None)
        if message and out is not None:
            out.write(message)


class _HelpShown(Exception):
    pass


def seconds(text: str) -> float:
    """argparse type of every `--timeout`: a positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, but got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive, finite number of seconds, but got {text!r}")
    return value


def bounded_int(lo: int, hi: int | None = None, what: str = "an integer"):
    """argparse type: an int in [lo, hi], the limit named in the message."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            limit = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
            raise argparse.ArgumentTypeError(f"expected {what} {limit}, got {value}")
        return value
    parse.__name__ = what
    return parse
