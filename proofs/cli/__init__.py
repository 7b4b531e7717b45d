"""The `prove` command; each subcommand is a module with `main(argv, stdout, stderr) -> int`."""

from ringproof.proofs.cli.main import main, run

__all__ = ["main", "run"]
