"""Executors: map one function over a stream of batches, results in input order, with a
bounded number of batches in flight (so memory stays bounded whatever the input).

Every executor has the same interface, used by solve, validate, generate and bench alike:

    executor = make_executor("local", workers=2, warm=warm_kernels)
    executor.start()              # workers up, kernels loaded: nothing left for the clock
    for result in executor.map_ordered(fn, items, *args): ...   # as often as needed
    executor.close()              # the job is done: let the workers go

`terminate()` stops at once instead (an error, Ctrl-C); `map_ordered` does it itself when a
worker dies or its consumer stops early.

* `InlineExecutor` runs everything in this process (one worker, no start-up cost);
* `LocalExecutor` uses a pool of worker processes on this machine, spawned (polars and pyarrow
  hold threads, and `fork` can deadlock them); workers load the compiled kernels from numba's
  cache;
* `DaskExecutor` (dask_executor.py) runs on a Dask cluster.

`warm` is a picklable function of no arguments that each worker (or this process, inline) runs
once in `start()`: loading the kernels the job will call.
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
from typing import Any, Protocol

from pipeline.errors import ExecutorLost, InputError

EXECUTORS = ("local", "dask")
WORKER_ENV = {"POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1"}


class Executor(Protocol):
    """What a job needs of an executor."""

    workers: int

    def start(self) -> None:
        """Bring the workers up and run `warm` on each, before any clock starts."""

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        """Yield `fn(item, *args)` for each item, in the order of `items`."""
        ...

    def close(self) -> None:
        """The job is done: let the workers go."""

    def terminate(self) -> None:
        """Stop at once: end the workers, drop what is queued."""


def warm_kernels(strategies: tuple[str, ...] = ("fast",)) -> None:
    """Load (or compile) every kernel a batch of these strategies may call: the strategies'
    own and the checks that run for clashing givens."""
    import numpy as np

    from pipeline.solver import solve_grids
    from pipeline.solver.checks import first_clash

    grids = np.zeros((2, 81), dtype=np.uint8)
    grids[1, :2] = 1  # a clash
    for strategy in strategies:
        solve_grids(grids, strategy, max_nodes=1000)
    first_clash(grids[1:])


class InlineExecutor:
    """Everything in this process: one worker, nothing to start."""

    def __init__(self, warm: Callable[[], None] | None = None) -> None:
        self.workers = 1
        self._warm = warm

    def start(self) -> None:
        if self._warm is not None:
            self._warm()

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        for item in items:
            yield fn(item, *args)

    def close(self) -> None:
        """Nothing runs elsewhere."""

    def terminate(self) -> None:
        """Nothing runs elsewhere."""


def _exit_with_parent(parent: int) -> None:
    """End this worker soon after its parent is gone (`kill -9` of the run, an OOM kill): a
    pool's workers otherwise wait for work forever, holding the terminal's stderr open."""
    while os.getppid() == parent:
        time.sleep(0.25)
    os._exit(1)


def _init_worker(parent: int, warm: Callable[[], None] | None) -> None:
    """Runs once in each worker: leave Ctrl-C to the parent, die with it, load the kernels."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True).start()
    if warm is not None:
        warm()


def _ready(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


class LocalExecutor:
    """A pool of `workers` processes on this machine."""

    def __init__(
        self,
        workers: int | None = None,
        warm: Callable[[], None] | None = None,
        in_flight_per_worker: int = 2,
    ) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.max_in_flight = max(2, self.workers * in_flight_per_worker)
        self._warm = warm
        self._pool: ProcessPoolExecutor | None = None
        self._saved_env: dict[str, str | None] = {}

    def start(self) -> None:
        """Spawn every worker and wait until each has run `warm`."""
        if self._pool is not None:
            return
        # One polars/pyarrow thread per worker: the workers are the parallelism. The variables
        # are set while the workers spawn (they keep their copy), then put back.
        self._saved_env = {k: os.environ.get(k) for k in WORKER_ENV}
        os.environ.update(WORKER_ENV)
        try:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=get_context("spawn"),
                initializer=_init_worker,
                initargs=(os.getpid(), self._warm),
            )
            pids: set[int] = set()
            for _ in range(100):  # each wait holds a worker for a moment: all get a turn
                pids |= set(self._pool.map(_ready, [0.02] * self.workers))
                if len(pids) >= self.workers:
                    break
        except BrokenProcessPool:
            self.terminate()
            raise ExecutorLost("a worker process died while starting") from None
        finally:
            self._restore_env()

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        """Yield `fn(item, *args)` for each item, in the order of `items`."""
        self.start()
        pool = self._pool
        assert pool is not None
        pending: deque[Future[Any]] = deque()
        try:
            for item in items:
                pending.append(pool.submit(fn, item, *args))
                if len(pending) >= self.max_in_flight:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool:  # the OOM killer, or someone's kill -9
            self.terminate()
            raise ExecutorLost(
                "a worker process died (out of memory? try a smaller --batch-size)"
            ) from None
        except BaseException:  # an error, Ctrl-C, or the consumer stopped early
            self.terminate()
            raise

    def close(self) -> None:
        """Let the workers finish and go."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def terminate(self) -> None:
        """Stop at once: kill the workers, drop what is queued."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)

    def _restore_env(self) -> None:
        for k, v in self._saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def make_executor(
    kind: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    warm: Callable[[], None] | None = None,
) -> Executor:
    """The executor for `--executor`: `local` (worker processes here) or `dask` (a running
    cluster at `scheduler`, or a LocalCluster of `workers` processes without one); each worker
    runs `warm` once when it starts."""
    if workers is not None and workers < 1:
        raise InputError(f"workers must be at least 1, not {workers}")
    if kind == "local":
        if scheduler is not None:
            raise InputError("--scheduler needs --executor dask")
        return LocalExecutor(workers, warm)
    if kind == "dask":
        from pipeline.jobs.dask_executor import DaskExecutor

        return DaskExecutor(scheduler, workers, warm)
    raise InputError(f"unknown executor {kind!r}; choose one of {', '.join(EXECUTORS)}")
