"""The ring prover: normalization and its lemma library, obligations derived from a schedule, Z3
discharge, bounded enumeration, counting (with hints proved by induction) and `verify`."""
