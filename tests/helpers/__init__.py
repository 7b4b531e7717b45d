"""What the tests share: mutant schedules, the whole-trace oracle, the simple bit-level run, the twin
replay check and the Z3 backend of the expression helpers (imported as `helpers.NAME`)."""
