"""All-gather context parallelism: how long `prove` of each llama3 target takes (issue #47: under
10 s), beside striped's `prove` run right after it in the same script, and their ratio.

    python benchmarks/allgather_prove.py [TARGET ...] [--repeat K]

Each run is a fresh process (`prove TARGET --quiet`), measured as benchmarks/varlen_prove.py
measures (CPU seconds of the child, and wall seconds); the median of K runs is printed per target.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from varlen_prove import table  # noqa: E402

TARGETS = ("llama3", "llama3-varlen")
PEER = "striped"
LIMIT = 10.0          # seconds, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", default=TARGETS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    table(args.targets, PEER, args.repeat, LIMIT)


if __name__ == "__main__":
    main()
