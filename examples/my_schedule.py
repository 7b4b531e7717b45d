"""A user's schedule file, the smallest: Algorithm 1 reused under a name of its own.

`prove examples/my_schedule.py` verifies it. A schedule file is plain Python that builds a
`Schedule` with the DSL and assigns it to SCHEDULE; `examples/matvec.py` writes one from scratch and
`examples/matvec_broken.py` derives one with a phase changed (docs/tutorial.md).
"""

from dataclasses import replace

from ringproof import ALGO1

# Reuse Algorithm 1 unchanged: a user's file may import and adapt the registered schedules.
SCHEDULE = replace(ALGO1, name="my-schedule")
