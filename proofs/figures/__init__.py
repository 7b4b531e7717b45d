"""The figures of a schedule: counts, balance and memory, derived in closed form and compared with
enumeration (docs/architecture.md); the checks they rest on stay in `ringproof.proofs.ring`."""
