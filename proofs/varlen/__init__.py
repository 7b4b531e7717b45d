"""Varlen schedules proved for every number of documents, every lengths vector and every m: the
base's proof per document, the obligations that make each document the base shifted, and the
composition lemma (docs/context-parallel.md, "Packed sequences")."""
