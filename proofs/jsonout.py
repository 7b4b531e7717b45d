"""Strict JSON for every command: no NaN or Infinity (a strict parser rejects them), and a
`schema_version` per command; docs/json-schemas/<command>.json describes each document.

A number that is not finite becomes null, with a sibling `<key>_reason` saying what it was.
Keys are only ever added, never renamed; a change that removes or retypes one bumps the version.
"""

from __future__ import annotations

import json
import math

SCHEMA_VERSIONS = {"prove": 1, "bitlevel": 1, "simulate": 1, "report": 1, "search": 1, "balance": 1,
                   "unroll": 1, "unroll-facts": 1, "bound": 1, "layout": 1, "conform": 1}


def strict(value):
    """value with every non-finite float replaced by None (and a reason beside it in a dict)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(v, float) and not math.isfinite(v):
                out[k] = None
                out.setdefault(f"{k}_reason", f"not a finite number ({v})")
            else:
                out[k] = strict(v)
        return out
    if isinstance(value, (list, tuple)):
        return [None if isinstance(v, float) and not math.isfinite(v) else strict(v) for v in value]
    return value


def document(command: str, doc: dict) -> dict:
    return {"schema_version": SCHEMA_VERSIONS[command], **strict(doc)}


def dumps(command: str, doc: dict, indent: int | None = 2) -> str:
    return json.dumps(document(command, doc), indent=indent, allow_nan=False)


def write(command: str, doc: dict, out, indent: int | None = 2) -> None:
    out.write(dumps(command, doc, indent) + "\n")
