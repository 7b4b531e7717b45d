"""The all-gather machine (Llama 3 context parallelism): every rank gathers all keys and values,
computes its own queries, and reduce-scatters dk, dv home after the backward."""
