"""Executors: map one function over a stream of batches on worker processes, results in input
order, with a bounded number of batches in flight (so memory stays bounded whatever the input).

`LocalExecutor` uses a process pool on this machine (spawned workers: polars and pyarrow hold
threads, and `fork` can deadlock them). Workers load the compiled kernels from numba's cache.
"""

import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

import numpy as np

from pipeline.formats import DatasetError

EXECUTORS = ("local", "dask")


class ExecutorLost(Exception):
    """The workers or the cluster went away mid-run (a killed worker process, a Dask
    scheduler gone); what is done stays in the run's checkpoint."""


def _exit_with_parent(parent: int) -> None:
    """End this worker soon after its parent is gone (`kill -9` of the run, an OOM kill): a
    pool's workers otherwise wait for work forever, holding the terminal's stderr open."""
    while os.getppid() == parent:
        time.sleep(0.25)
    os._exit(1)


def _init_worker(parent: int) -> None:
    """Runs once in each worker: leave Ctrl-C to the parent, die with it, load the kernels."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    from pipeline.solver import solve_grids

    solve_grids(np.zeros((1, 81), dtype=np.uint8))


_WORKER_ENV = {"POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1"}


class LocalExecutor:
    """A pool of `workers` processes on this machine."""

    def __init__(self, workers: int | None = None, in_flight_per_worker: int = 2) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.max_in_flight = max(2, self.workers * in_flight_per_worker)
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Nothing to prepare: the pool starts with the first batch."""

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        """Yield `fn(item, *args)` for each item, in the order of `items`."""
        # One polars/pyarrow thread per worker: the workers are the parallelism. Workers are
        # spawned on demand while the pool lives, so the variables stay set until it ends.
        saved = {k: os.environ.get(k) for k in _WORKER_ENV}
        os.environ.update(_WORKER_ENV)
        pending: deque[Future[Any]] = deque()
        try:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=get_context("spawn"),
                initializer=_init_worker,
                initargs=(os.getpid(),),
            )
            for item in items:
                pending.append(self._pool.submit(fn, item, *args))
                if len(pending) >= self.max_in_flight:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
            self._pool.shutdown(wait=True)
            self._pool = None
        except BrokenProcessPool:  # the OOM killer, or someone's kill -9
            raise ExecutorLost(
                "a worker process died (out of memory? try a smaller --batch-size)"
            ) from None
        finally:
            self.terminate()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def terminate(self) -> None:
        """Stop at once: kill the workers, drop what is queued."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)


def make_executor(
    kind: str = "local", workers: int | None = None, scheduler: str | None = None
) -> "LocalExecutor | Any":
    """The executor for `--executor`: `local` (a process pool here) or `dask` (a running
    cluster at `scheduler`, or a LocalCluster of `workers` processes without one)."""
    if workers is not None and workers < 1:
        raise DatasetError(f"workers must be at least 1, not {workers}")
    if kind == "local":
        if scheduler is not None:
            raise DatasetError("--scheduler needs --executor dask")
        return LocalExecutor(workers)
    if kind == "dask":
        from pipeline.dask_executor import DaskExecutor

        return DaskExecutor(scheduler, workers)
    raise DatasetError(f"unknown executor {kind!r}; choose one of {', '.join(EXECUTORS)}")
