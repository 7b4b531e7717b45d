"""The cycle-level ring machine: runs a schedule for concrete n, m and compares with numpy attention."""
