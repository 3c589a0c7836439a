"""A Dask worker preload for tests/test_dask*.py: the worker holds batches, for ever.

`dask worker --preload tests/dask_hold.py`, with `HOLD_FROM_ROW` set in its environment: each
batch of a solve run whose first row is at or past that row is held (never solved) once it
reaches the worker, and a file `held-<row>` in the folder `HELD_IN` says so. A test can then
act on a run that is certainly mid-way (kill the worker, or the scheduler) instead of racing it.
With `HOLD_JOB=augment`, an augment run's batches are held. With `HOLD_JOB=validate` (or
`split`), the batches of a validate (or split) run on Dask are
held instead, as their slices' first round reads them (`jobs.validate.sharded`,
`jobs.split.sharded`); with `HOLD_JOB=validate-train`, the batches of the training inputs
of a leak audit (`validate --against`: `jobs.validate.leak_shards`).
"""

import os
import threading
from pathlib import Path

import pipeline.jobs.augment.job
import pipeline.jobs.solve.job
import pipeline.jobs.split.sharded
import pipeline.jobs.validate.leak_shards
import pipeline.jobs.validate.sharded

HOLD_FROM_ROW = int(os.environ["HOLD_FROM_ROW"])
HELD_IN = Path(os.environ["HELD_IN"])
HOLD_JOB = os.environ.get("HOLD_JOB", "solve")
_never = threading.Event()


def _hold(start: int) -> None:
    if start >= HOLD_FROM_ROW:
        (HELD_IN / f"held-{start}").touch()
        _never.wait()


# Dask may load a preload more than once: wrap the job's own function, never a wrapper.
_PLACES = {
    "solve": (pipeline.jobs.solve.job, "solve_part"),
    "augment": (pipeline.jobs.augment.job, "augment_part"),
    "validate": (pipeline.jobs.validate.sharded, "validate_record_batch"),
    "split": (pipeline.jobs.split.sharded, "split_record_batch"),
    "validate-train": (pipeline.jobs.validate.leak_shards, "train_batch"),  # --against's TRAIN
}
_module, _name = _PLACES[HOLD_JOB]
_own = getattr(getattr(_module, _name), "__wrapped__", getattr(_module, _name))


def held(work, *args):
    """The job's function, holding a batch from `HOLD_FROM_ROW` on (a solve or augment task's
    start; a batch's first `row` for the others)."""
    _hold(work[0] if HOLD_JOB in ("solve", "augment") else work.column("row")[0].as_py())
    return _own(work, *args)


held.__wrapped__ = _own
# Tasks find the function by module and name (solve, augment), or call it from its module (the
# others): the worker looks it up there, and finds this one.
setattr(_module, _name, held)
