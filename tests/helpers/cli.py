"""Run `prove` in this process and read what it printed."""

import io

from ringproof.proofs.cli import main


def call(*argv):
    """(exit code, stdout, stderr) of `prove ARGV`."""
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def one_line_error(err: str) -> str:
    """The one line of an error on stderr (no traceback, nothing else)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]
