"""What every `prove` subcommand shares, written once: help derived from the subcommand table
(`main.SUBCOMMANDS`), the exit codes (`Exit`), an argparse that reports bad usage as bad input, the
argument types, progress on stderr (`Progress`) and JSON output with its schema version (`write_json`).

A subcommand is a module with `parser() -> ArgumentParser` and `main(argv, stdout, stderr) -> int`.
"""

from __future__ import annotations

import argparse
import math
import re
import textwrap

from ringproof.errors import BadInput, Exit
from ringproof.proofs.jsonout import write as write_json
from ringproof.proofs.progress import Progress

__all__ = ["Exit", "ArgumentParser", "seconds", "bounded_int", "positive_int",
           "Progress", "write_json", "subcommand_help", "output_file", "output_dir"]


def subcommand_help() -> str:
    """The subcommands of `main.SUBCOMMANDS`, each with the main clause of the first sentence of its
    module's docstring, wrapped (read from the source, so `prove --help` imports no subcommand)."""
    import ast
    import importlib.util

    from ringproof.proofs.cli.main import SUBCOMMANDS

    def summary(module: str) -> str:
        spec = importlib.util.find_spec(module)
        with open(spec.origin, encoding="utf-8") as f:
            doc = ast.get_docstring(ast.parse(f.read())) or ""
        text = " ".join(doc.split("\n\n")[0].split())
        text = text.split(": ", 1)[1] if text.startswith("`prove") and ": " in text else text
        first = text.split(". ")[0].rstrip(".")
        first = re.sub(r" \([^()]*[/.][^()]*\)", "", first)      # a pointer into docs/ or the source
        return first.split("; ")[0]                                 # the main clause: whole, never cut

    width = max(map(len, SUBCOMMANDS))
    indent = " " * (width + 4)          # a long summary wraps under itself, never cut off
    return "subcommands (prove SUBCOMMAND --help):\n" + "".join(
        textwrap.fill(summary(module), 100, initial_indent=f"  {name.ljust(width)}  ", subsequent_indent=indent) + "\n"
        for name, module in SUBCOMMANDS.items())


class ArgumentParser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self._later: list = []

    def later(self, text, action=None):
        """The description (or `action`'s help) given by `text()`, built only where the help is
        shown: `prove TARGET` need not build every registered schedule or read every subcommand's
        source for texts it never prints."""
        self._later.append((action, text))

    def format_help(self):
        for action, text in self._later:
            if action is None:
                self.description = text()
            else:
                action.help = text()
        self._later = []
        return super().format_help()

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


positive_int = bounded_int(1, what="an integer")


def output_file(path: str, option: str):
    """A file the command will write, checked before any work: not a directory, in a directory that
    exists and may be written. Returns (Path, whether a file is there already)."""
    import os
    from pathlib import Path

    p = Path(path)
    try:
        if p.is_dir():
            raise BadInput(f"{option} {path!r} is a directory; name a file")
        parent = p.parent
        if not parent.is_dir():
            raise BadInput(f"{option} {path!r}: the directory {str(parent)!r} does not exist")
        if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
            raise BadInput(f"{option} {path!r} cannot be written")
        return p, p.exists()
    except OSError as err:
        raise BadInput(f"{option} {path!r}: {err.strerror}") from None


def output_dir(path: str, option: str):
    """A directory the command will write into, created now (before any work) if missing."""
    from pathlib import Path

    p = Path(path)
    try:
        if p.exists() and not p.is_dir():
            raise BadInput(f"{option} {path!r} is a file; name a directory")
        p.mkdir(parents=True, exist_ok=True)
        probe = p / ".ringproof-write-check"
        probe.write_text("")
        probe.unlink()
    except OSError as err:
        raise BadInput(f"{option} {path!r} cannot be written: {err.strerror}") from None
    return p
