"""A Dask worker preload for tests/test_dask.py: the worker holds batches, for ever.

`dask worker --preload tests/dask_hold.py`, with `HOLD_FROM_ROW` set in its environment: each
batch of a solve run whose first row is at or past that row is held (never solved) once it
reaches the worker, and a file `held-<row>` in the folder `HELD_IN` says so. A test can then
act on a run that is certainly mid-way (kill the worker, or the scheduler) instead of racing it.
"""

import os
import threading
from pathlib import Path

import pipeline.jobs.solve.job

HOLD_FROM_ROW = int(os.environ["HOLD_FROM_ROW"])
HELD_IN = Path(os.environ["HELD_IN"])
# Dask may load a preload more than once: wrap the job's own function, never a wrapper.
_solve_part = getattr(
    pipeline.jobs.solve.job.solve_part, "__wrapped__", pipeline.jobs.solve.job.solve_part
)
_never = threading.Event()


def held_solve_part(task, *args):
    start = task[0]
    if start >= HOLD_FROM_ROW:
        (HELD_IN / f"held-{start}").touch()
        _never.wait()
    return _solve_part(task, *args)


held_solve_part.__wrapped__ = _solve_part
# Tasks name `solve_part` by module and name: the worker looks it up here, and finds this one.
pipeline.jobs.solve.job.solve_part = held_solve_part
