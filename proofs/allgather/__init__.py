"""The all-gather targets (`llama3`, `llama3-varlen`) proved for every m, T and lengths vector:
obligations on a generic (rank, document) segment, a composition lemma over segments, and the
concrete sweep (docs/context-parallel.md, "All-gather context parallelism (Llama 3)")."""
