"""The one exception hierarchy of ringproof. Each class carries the `prove` exit code it maps to:

    BadInput          64  the user's input is malformed; fix what the message names
    OutsideFragment    2  a formula the prover cannot decide; the verdict is `unknown`, never proved
    InternalError     70  a bug in ringproof; please report it with the command that raised it

Exit 1 is never an error: it means a property was refuted. Anything raised that is not a
`RingproofError` is an internal error too (exit 70); `prove --debug` shows its traceback.
"""


class RingproofError(Exception):
    """Base of every error ringproof raises on purpose."""

    exit_code = 70


class BadInput(RingproofError):
    """The user's input is malformed (bad n or m, unknown target, broken schedule file).

    Fix the input named in the message; the CLI exits with code 64.
    """

    exit_code = 64


class OutsideFragment(RingproofError):
    """A formula lies outside what the prover decides (e.g. nonlinear index arithmetic).

    Never a proof: the property's verdict is `unknown` (exit 2) with this message as the reason.
    """

    exit_code = 2


class InternalError(RingproofError):
    """ringproof itself went wrong; exit 70. Report it with the command that raised it."""

    exit_code = 70


class Interrupted(RingproofError):
    """The user stopped the run (Ctrl-C); exit 130."""

    exit_code = 130
