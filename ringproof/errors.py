"""The one exception hierarchy of ringproof. Each class carries the `prove` exit code it maps to:

    BadInput          64  the user's input is malformed; fix what the message names
    OutsideFragment    2  a formula the prover cannot decide; the verdict is `unknown`, never proved
    InternalError     70  a bug in ringproof; please report it with the command that raised it

Exit 1 is never an error: it means a property was refuted. Anything raised that is not a
`RingproofError` is an internal error too (exit 70); `prove --debug` shows its traceback.
`Exit` is the one table of exit codes; the classes and `Verdict.exit_code` read it.
"""

import enum


class Exit(enum.IntEnum):
    """Every exit code of `prove`, named once."""

    OK = 0              # proved, or the command succeeded
    REFUTED = 1         # a property refuted, and nothing else
    UNKNOWN = 2         # a verdict unknown: timeout, solver unknown, outside the fragment, not proven
    BAD_INPUT = 64
    INTERNAL = 70
    INTERRUPTED = 130


class RingproofError(Exception):
    """Base of every error ringproof raises on purpose."""

    exit_code = Exit.INTERNAL


class BadInput(RingproofError):
    """The user's input is malformed (bad n or m, unknown target, broken schedule file).

    Fix the input named in the message; the CLI exits with code 64.
    """

    exit_code = Exit.BAD_INPUT


class OutsideFragment(RingproofError):
    """A formula lies outside what the prover decides (e.g. nonlinear index arithmetic).

    Never a proof: the property's verdict is `unknown` (exit 2) with this message as the reason.
    """

    exit_code = Exit.UNKNOWN


class InternalError(RingproofError):
    """ringproof itself went wrong; exit 70. Report it with the command that raised it."""

    exit_code = Exit.INTERNAL


class Interrupted(RingproofError):
    """The user stopped the run (Ctrl-C); exit 130."""

    exit_code = Exit.INTERRUPTED
