"""The finished cubes of a search, kept in a JSON file so that a stopped search resumes where it was.

Only decided cubes are recorded (UNSAT, or SAT with its witness); an UNKNOWN cube is run again. The
file names its query (variant, sizes, barriers, placement); a file of another query is bad input. A
recorded witness is replayed by the checker again when it is read, like every witness.
"""

from __future__ import annotations

import json
import os
import pathlib

from ringproof.errors import BadInput
from ringproof.model.bitlevel.types import Op, Run, Send, SatVerdict


def run_to_json(run: Run) -> dict:
    return {"T": run.T, "ops": [[o.t, o.p, o.kind, o.i, o.j, o.l] for o in run.ops],
            "sends": [[s.t, s.p, list(s.datum)] for s in run.sends]}


def run_from_json(doc: dict, query: dict, placement: dict | None) -> Run:
    ops = tuple(Op(*o) for o in doc["ops"])
    sends = tuple(Send(t, p, tuple(x)) for t, p, x in doc["sends"])
    return Run(query["variant"], query["n"], query["m"], query["d"], doc["T"], ops, sends, placement,
               query["barriers"])


class SearchState:
    """{cube name: (verdict, witness or None)} of one query, saved to `path` after every cube."""

    def __init__(self, path: str | None, query: dict, placement: dict | None = None):
        self.path, self.query, self.placement = (pathlib.Path(path) if path else None), query, placement
        self.done: dict[str, tuple[SatVerdict, Run | None]] = {}
        if self.path is not None and not self.path.parent.is_dir():
            raise BadInput(f"--state {self.path}: folder {self.path.parent} does not exist")
        if self.path is None or not self.path.exists():
            return
        try:
            doc = json.loads(self.path.read_text())
            if doc.get("query") != query:
                raise BadInput(f"--state {self.path} belongs to another search: {doc.get('query')}")
            for name, rec in doc["cubes"].items():
                run = run_from_json(rec["run"], query, placement) if rec.get("run") else None
                self.done[name] = (SatVerdict(rec["verdict"]), run)
        except (ValueError, KeyError, TypeError) as e:
            raise BadInput(f"--state {self.path} is not a search state file ({e})") from None

    def record(self, name: str, verdict: SatVerdict, run: Run | None) -> None:
        if verdict is SatVerdict.UNKNOWN:
            return
        self.done[name] = (verdict, run)
        if self.path is None:
            return
        doc = {"query": self.query, "cubes": {k: {"verdict": v.value, "run": None if r is None else run_to_json(r)}
                                              for k, (v, r) in sorted(self.done.items())}}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(doc))
        os.replace(tmp, self.path)
