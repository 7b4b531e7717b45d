"""A user's schedule file: Algorithm 1 with phase 3 rewritten so that y_A[C] walks the ring.

`prove examples/my_schedule.py` verifies it. A schedule file is plain Python that builds a
`Schedule` with the DSL and assigns it to SCHEDULE.
"""

from dataclasses import replace

from ringproof import ALGO1

# Reuse Algorithm 1 unchanged: a user's file may import and adapt the registered schedules.
SCHEDULE = replace(ALGO1, name="my-schedule")
