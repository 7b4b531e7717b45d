"""The `prove` command.

    prove TARGET [options]        verify a registered algorithm (algo1, ...) or a schedule file
    prove simulate TARGET -n N -m M
    prove report TARGET ...
    prove search / balance / unroll ...

Exit codes: 0 all proved (or the command succeeded), 1 a property refuted, 2 a verdict unknown
(timeout or solver unknown), 64 bad input. Every subcommand is `main(argv, stdout, stderr) -> int`.
"""

from __future__ import annotations

import importlib
import sys

from schedules.errors import RingproofError

# subcommand -> module holding its `main(argv, stdout, stderr) -> int`; imported only when used
SUBCOMMANDS = {
    "simulate": "proofs.cli_simulate",
    "report": "proofs.cli_report",
    "search": "proofs.cli_search",
    "balance": "proofs.cli_balance",
    "unroll": "proofs.cli_unroll",
}
DEFAULT = "proofs.cli_verify"


def main(argv: list[str] | None = None, stdout=None, stderr=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    if argv and argv[0] in SUBCOMMANDS:
        module, rest = SUBCOMMANDS[argv[0]], argv[1:]
    else:
        module, rest = DEFAULT, argv
    try:
        return importlib.import_module(module).main(rest, stdout, stderr)
    except RingproofError as err:
        print(f"prove: error: {err}", file=stderr)
        return err.exit_code


if __name__ == "__main__":
    sys.exit(main())
