"""The one exception hierarchy of ringproof; the CLI maps each class to an exit code."""


class RingproofError(Exception):
    """Base of every error ringproof raises on purpose."""

    exit_code = 70


class BadInput(RingproofError):
    """The user's input is malformed (bad n or m, unknown target, broken schedule file).

    Fix the input named in the message; the CLI exits with code 64.
    """

    exit_code = 64
