"""The memory-bank / compute-cluster device of the Intel batch-scheduling paper: instances
(`instances`) and the batch problem with its heuristics (`batch`). The MINIMAX solver lives in
`ringproof.proofs.balance`."""
