"""The matrix-vector schedule with one change: the running sum never moves (docs/tutorial.md,
step 3). Built from examples/matvec.py with `derive`, without copying its phase."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from matvec import SCHEDULE as MATVEC  # noqa: E402

SCHEDULE = MATVEC.derive("matvec-no-send", {"rows": dict(send=None)})
