"""The device of the Intel batch-scheduling paper: memory banks, compute clusters near one bank each,
hop distances between banks (ring or line) and latency as a function of hops.

Instances come from parameters (`generate`) or from a JSON / CSV file (`load`); both give a
`ringproof.model.device.batch.BatchProblem`, the plain data the heuristics and the MINIMAX solver work on.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from ringproof.model.device.batch import BatchProblem
from ringproof.errors import BadInput

TOPOLOGIES = ("ring", "line")


@dataclass(frozen=True)
class Device:
    """Banks 0..banks-1 on a ring or a line; near[q] is cluster q's bank.

    Reading bank b from a cluster near bank c costs base + per_hop * hops(b, c) per unit of data.
    """

    banks: int
    near: tuple[int, ...]
    topology: str = "ring"
    base: Fraction = Fraction(1)
    per_hop: Fraction = Fraction(1)

    def __post_init__(self):
        if not isinstance(self.banks, int) or self.banks < 1:
            raise BadInput(f"banks must be a positive integer, got banks={self.banks!r}")
        if self.topology not in TOPOLOGIES:
            raise BadInput(f"topology must be one of {TOPOLOGIES}, got topology={self.topology!r}")
        if Fraction(self.base) <= 0 or Fraction(self.per_hop) < 0:
            raise BadInput(f"need base > 0 and per_hop >= 0, got base={self.base}, per_hop={self.per_hop}")

    @classmethod
    def even(cls, banks: int, clusters: int, **kw) -> Device:
        """Clusters split into contiguous, as-even-as-possible groups, group b near bank b."""
        if not isinstance(clusters, int) or not isinstance(banks, int) or banks < 1 or clusters < banks:
            raise BadInput(f"need clusters >= banks >= 1 so that every bank has a near cluster, "
                           f"got banks={banks!r}, clusters={clusters!r}")
        return cls(banks, tuple(q * banks // clusters for q in range(clusters)), **kw)

    def hops(self, b: int, c: int) -> int:
        d = abs(b - c)
        return min(d, self.banks - d) if self.topology == "ring" else d

    def latency(self, hops: int) -> Fraction:
        return Fraction(self.base) + Fraction(self.per_hop) * hops

    def latency_matrix(self) -> tuple[tuple[Fraction, ...], ...]:
        return tuple(tuple(self.latency(self.hops(b, c)) for c in range(self.banks)) for b in range(self.banks))

    def problem(self, shares, seed: int = 0) -> BatchProblem:
        """The scheduling problem of these patches (rows of bank proportions) on this device."""
        rows = tuple(tuple(Fraction(x) for x in row) for row in shares)
        return BatchProblem(rows, self.near, self.latency_matrix(), seed)


def _fraction(x, name: str) -> Fraction:
    try:
        return Fraction(str(x).strip())
    except (ValueError, ZeroDivisionError):
        raise BadInput(f"{name} must be a number, got {name}={x!r}") from None


def generate(patches: int, banks: int, clusters: int, skew: float, overlap: float, seed: int = 0,
             **device_kw) -> BatchProblem:
    """A synthetic instance laid out bank by bank in memory order.

    round(skew * patches) patches lie mainly on bank 0, the rest evenly on banks 1..B-1; a share
    round(overlap * patches) of them, picked by `seed`, straddle their bank and the next one
    (1/2 or 3/4 of the patch on its own bank) — the paper's OVERLAP rows.
    """
    if not isinstance(patches, int) or patches < 0:
        raise BadInput(f"patches must be a non-negative integer, got patches={patches!r}")
    for name, x in (("skew", skew), ("overlap", overlap)):
        if not 0 <= x <= 1:
            raise BadInput(f"{name} must lie in [0, 1], got {name}={x!r}")
    device = Device.even(banks, clusters, **device_kw)
    on_first = round(Fraction(str(skew)) * patches) if banks > 1 else patches
    rest = patches - on_first
    counts = [on_first] + [rest // (banks - 1) + (i < rest % (banks - 1)) for i in range(banks - 1)]
    major = [b for b, n in enumerate(counts) for _ in range(n)]
    rng = random.Random(seed)
    straddling = set(rng.sample(range(patches), round(Fraction(str(overlap)) * patches))) if banks > 1 else set()
    rows = []
    for p, b in enumerate(major):
        row = [Fraction(0)] * banks
        if p in straddling:
            other = (b + 1) % banks if device.topology == "ring" or b + 1 < banks else b - 1
            own = rng.choice((Fraction(1, 2), Fraction(3, 4)))
            row[b], row[other] = own, 1 - own
        else:
            row[b] = Fraction(1)
        rows.append(row)
    return device.problem(rows, seed)


def load(path: str | Path, banks: int | None = None, clusters: int | None = None, seed: int = 0,
         **device_kw) -> BatchProblem:
    """An instance from a file.

    JSON: {"banks": B, "clusters": Q or "near": [bank of each cluster], "topology": "ring"|"line",
    "base": 1, "per_hop": 1, "patches": [[share on bank 0, ..., share on bank B-1], ...]}.
    CSV: one row per patch, one column per bank (header row optional; a column named "overlap" is
    ignored); the device comes from `banks` / `clusters` and the keyword arguments.
    Proportions may be decimals or fractions ("1/3") and must sum to 1 exactly.
    """
    path = Path(path)
    if path.suffix.lower() not in (".json", ".csv"):
        raise BadInput(f"{path} is not an instance file: expected a .json or .csv file of patches")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(f"cannot read instance file {str(path)[:80]!r}: {getattr(err, 'strerror', None) or err}") from None
    if path.suffix.lower() == ".json":
        try:
            spec = json.loads(text)
        except json.JSONDecodeError as err:
            raise BadInput(f"{path}: not valid JSON ({err.msg} at line {err.lineno})") from None
        if not isinstance(spec, dict) or not isinstance(spec.get("patches"), list):
            raise BadInput(f"{path}: expected an object with a 'patches' list")
        kw = {k: _fraction(spec[k], k) for k in ("base", "per_hop") if k in spec}
        kw["topology"] = spec.get("topology", device_kw.get("topology", "ring"))
        rows = spec["patches"]
        inferred = len(rows[0]) if rows and isinstance(rows[0], list) else 1
        nbanks = spec.get("banks", banks if banks is not None else inferred)
        if "near" in spec:
            if not isinstance(spec["near"], list):
                raise BadInput(f"{path}: 'near' must list each cluster's bank, got near={spec['near']!r}")
            device = Device(nbanks, tuple(spec["near"]), **kw)
        else:
            device = Device.even(nbanks, spec.get("clusters", clusters), **kw)
    else:
        table = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
        if table and not _numeric(table[0]):
            header = [h.strip().lower() for h in table[0]]
            keep = [i for i, h in enumerate(header) if h != "overlap"]
            table = [[r[i] for i in keep if i < len(r)] for r in table[1:]]
        if banks is None:
            banks = len(table[0]) if table else 1
        device = Device.even(banks, clusters, **device_kw)
        rows = table
    if not all(isinstance(r, list) for r in rows):
        raise BadInput(f"{path}: each patch must be a list of bank proportions")
    if not rows:
        raise BadInput(f"{path}: no patches (an instance lists one row of bank proportions per patch)")
    return device.problem([[_fraction(x, f"patch {p} proportion") for x in r] for p, r in enumerate(rows)], seed)


def _numeric(row) -> bool:
    try:
        [Fraction(c.strip()) for c in row]
        return True
    except (ValueError, ZeroDivisionError):
        return False
