"""MINIMAX load balancing of batch patches on the bank/cluster device (`minimax`)."""
