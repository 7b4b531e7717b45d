"""`python -m ringproof ...`: the `prove` command, for a machine where another `prove` comes first
on PATH (Perl's TAP harness is /usr/bin/prove on most Linux systems)."""

from ringproof.proofs.cli import run

run()
