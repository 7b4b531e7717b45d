"""What is verified: the schedule DSL (`dsl`, `expr`), the problems, and Algorithms 1, 2 and 3."""
