"""Executors: map one function over a stream of batches, results in input order, with a
bounded number of batches in flight (so memory stays bounded whatever the input).

Every executor has the same interface, used by solve, validate, generate and bench alike:

    executor = make_executor("local", workers=2, warm=partial(warm, ("fast", "clash")))
    executor.start()              # workers up, kernels loaded: nothing left for the clock
    for result in executor.map_ordered(fn, items, *args): ...   # as often as needed
    executor.close()              # the job is done: let the workers go

`terminate()` stops at once instead (an error, Ctrl-C); `map_ordered` does it itself when a
worker dies or its consumer stops early.

* `InlineExecutor` runs everything in the calling thread;
* `ThreadExecutor` (the local default) runs `workers` threads in this process: the kernels
  release the GIL, and so do parsing (polars, numpy) and encoding (pyarrow), so threads use
  every core with no process to start, nothing to pickle and one copy of the kernels in memory;
* `ProcessExecutor` uses a pool of spawned worker processes (polars and pyarrow hold threads,
  and `fork` can deadlock them), each loading the kernels from numba's cache: isolation, at the
  cost of start-up and of pickling every batch. Each worker has pipes of its own
  (worker_process.py), so a worker that dies, even mid-batch, or a Ctrl-C ends the run in
  bounded time;
* `DaskExecutor` (dask_executor.py) runs on a Dask cluster.

`warm` is a picklable function of no arguments run once in `start()`, in each worker process
(or once in this process for threads): loading the kernels the job will call (`warmup.warm`).
"""

import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Protocol

from pipeline import waiting
from pipeline.errors import InputError
from pipeline.limits import MAX_WORKERS
from pipeline.waiting import join, result_of

if TYPE_CHECKING:  # multiprocessing is imported by the process executor only
    from pipeline.run.worker_process import WorkerProcess

EXECUTORS = ("local", "processes", "dask")
WORKER_ENV = {"POLARS_MAX_THREADS": "1", "OMP_NUM_THREADS": "1"}
WORKER_THREAD = "sudoku-worker-"  # the name of ThreadExecutor's threads (and of `warm_here`'s)
CLOSE_S = 10.0  # how long `ProcessExecutor.close` gives a worker to end before killing it


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


def warm_here(warm: Callable[[], None]) -> None:
    """Run `warm` in this process, on a thread of its own, and wait for it. Ctrl-C then ends
    the wait at once, and never lands inside numba's loading of a kernel: a KeyboardInterrupt
    raised in its LLVM callbacks is swallowed (the run goes on as if no Ctrl-C came) or leaves
    the engine half-built, and the process dies of SIGSEGV. An interrupted warm-up finishes in
    the background (a daemon thread, named as the workers are: `cli.process.fail` ends the
    program without waiting for it)."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            warm()
        except BaseException as e:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(e)

    thread = threading.Thread(target=run, name=f"{WORKER_THREAD}warm", daemon=True)
    thread.start()
    join(thread)  # woken often: a Ctrl-C that lands on another thread is taken too
    if failed:
        raise failed[0]


def check_workers(workers: int | None) -> None:
    """`InputError` (one line; a ValueError) unless `workers` is None or 1 to `MAX_WORKERS`."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)):
        raise InputError(f"workers must be a whole number, not {workers!r}")
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise InputError(f"workers must be between 1 and {MAX_WORKERS:,}, not {workers:,}")


class InlineExecutor:
    """Everything in this process: one worker, nothing to start."""

    def __init__(self, warm: Callable[[], None] | None = None) -> None:
        self.workers = 1
        self._warm = warm

    def start(self) -> None:
        if self._warm is not None:
            warm_here(self._warm)

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        for item in items:
            yield fn(item, *args)

    def close(self) -> None:
        """Nothing runs elsewhere."""

    def terminate(self) -> None:
        """Nothing runs elsewhere."""


class _LocalPool:
    """What the local executors share: how many workers (default: the CPUs this process may
    use), how many batches may be in flight, the warm-up."""

    def __init__(
        self,
        workers: int | None = None,
        warm: Callable[[], None] | None = None,
        in_flight_per_worker: int = 2,
    ) -> None:
        from pipeline.io.runinfo import usable_cpus

        check_workers(workers)
        self.workers = workers or usable_cpus()
        self.max_in_flight = max(2, self.workers * in_flight_per_worker)
        self._warm = warm
        self._idle()

    def _idle(self) -> None:
        """The state of a pool that has not started."""


class ThreadExecutor(_LocalPool):
    """`workers` threads in this process; results in input order, at most
    `in_flight_per_worker` batches a worker queued or running at a time."""

    def _idle(self) -> None:
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple] | None]
        self._tasks = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Load the kernels (once: the threads share them) and start the threads."""
        if self._threads:
            return
        if self._warm is not None:
            warm_here(self._warm)
        for i in range(self.workers):
            # daemon threads: an interrupted run exits without waiting for a batch to end
            thread = threading.Thread(target=self._work, name=f"{WORKER_THREAD}{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            future, fn, args = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                future.set_exception(e)

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        """Yield `fn(item, *args)` for each item, in the order of `items`."""
        self.start()
        pending: deque[Future[Any]] = deque()
        try:
            for item in items:
                future: Future[Any] = Future()
                self._tasks.put((future, fn, (item, *args)))
                pending.append(future)
                if len(pending) >= self.max_in_flight:
                    yield result_of(pending.popleft())
            while pending:
                yield result_of(pending.popleft())
        except BaseException:  # an error, Ctrl-C, or the consumer stopped early
            for future in pending:
                future.cancel()
            raise

    def close(self) -> None:
        """Let the threads finish what they hold and end."""
        threads, self._threads = self._threads, []
        for _ in threads:
            self._tasks.put(None)
        for thread in threads:
            thread.join()

    def terminate(self) -> None:
        """Stop at once: queued batches are dropped; a batch a thread is in finishes in the
        background (a daemon thread: it does not hold up the process's exit)."""
        threads, self._threads = self._threads, []
        while True:
            try:
                task = self._tasks.get_nowait()
            except queue.Empty:
                break
            if task is not None:
                task[0].cancel()
        for _ in threads:
            self._tasks.put(None)


class ProcessExecutor(_LocalPool):
    """`workers` processes on this machine (worker_process.py: why not concurrent.futures);
    results in input order, at most `in_flight_per_worker` batches a worker queued or
    running, and `max_in_flight` sent and not yet yielded."""

    def _idle(self) -> None:
        self._pool: list[WorkerProcess] = []

    def start(self) -> None:
        """Spawn every worker and wait until each has run `warm`. `warm` runs here first:
        on a first run the kernels compile once, in this process, and the workers load them
        from the cache it filled instead of each compiling them at the same time. Ctrl-C stops
        the wait at once."""
        if self._pool:
            return
        from multiprocessing import get_context

        from pipeline.run.worker_process import spawn_worker

        if self._warm is not None:
            warm_here(self._warm)
        # One polars/pyarrow thread per worker: the workers are the parallelism. The variables
        # are set while the workers spawn (they keep their copy), then put back.
        saved = {k: os.environ.get(k) for k in WORKER_ENV}
        os.environ.update(WORKER_ENV)
        try:
            for i in range(self.workers):
                name = f"sudoku-process-{i}"
                spawn_worker(get_context("spawn"), self._warm, name, self._pool)
            for worker in self._pool:
                worker.wait_ready()
        except BaseException:
            self.terminate()
            raise
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        """Yield `fn(item, *args)` for each item, in the order of `items`."""
        self.start()
        per_worker = -(-self.max_in_flight // self.workers)
        done: dict[int, tuple[bool, Any]] = {}  # outcomes that came before their turn
        source, more = iter(items), True
        sent = taken = 0
        try:
            while True:
                while more and sent - taken < self.max_in_flight:
                    worker = min(self._pool, key=lambda w: w.busy)
                    if worker.busy >= per_worker:
                        break
                    try:
                        item = next(source)
                    except StopIteration:
                        more = False
                        break
                    worker.send((sent, fn, (item, *args)))
                    sent += 1
                while taken in done:
                    ok, value = done.pop(taken)
                    taken += 1
                    if not ok:
                        raise value
                    yield value
                if not more and taken == sent:
                    return
                self._collect(done)
        except BaseException:  # a lost worker, an error, Ctrl-C, or the consumer stopped early
            self.terminate()
            raise

    def _collect(self, done: dict[int, tuple[bool, Any]]) -> None:
        """Wait for outcomes (Ctrl-C interrupts the wait) and file them in `done`; a task that
        could not even be read raises its error now; `ExecutorLost` if a worker died."""
        from pipeline.run.worker_process import lost

        by_pipe = {worker.results: worker for worker in self._pool}
        ended = {worker.sentinel for worker in self._pool}
        ready = waiting.ready([*by_pipe, *ended])
        for pipe in ready:
            if pipe in by_pipe:
                index, ok, value = by_pipe[pipe].receive()
                if index is None:
                    raise value
                done[index] = (ok, value)
        if ended.intersection(ready):
            raise lost()

    def close(self) -> None:
        """Let the workers go (nothing is left for them to do)."""
        pool, self._pool = self._pool, []
        for worker in pool:
            worker.stop(CLOSE_S)

    def terminate(self) -> None:
        """Stop at once: kill the workers and reap them; what they held is dropped."""
        pool, self._pool = self._pool, []
        for worker in pool:
            worker.kill()


def make_executor(
    kind: str = "local",
    workers: int | None = None,
    scheduler: str | None = None,
    warm: Callable[[], None] | None = None,
) -> Executor:
    """The executor for `--executor`: `local` (threads here), `processes` (worker processes
    here) or `dask` (a running cluster at `scheduler`, or a LocalCluster of `workers`
    processes without one); `warm` loads the kernels in each when it starts. `inline` (not
    an option of the command line): everything in the calling thread (bench on one core)."""
    check_workers(workers)
    if kind != "dask" and scheduler is not None:
        raise InputError("--scheduler needs --executor dask")
    if kind == "inline":
        return InlineExecutor(warm)
    if kind == "local":
        return ThreadExecutor(workers, warm)
    if kind == "processes":
        return ProcessExecutor(workers, warm)
    if kind == "dask":
        from pipeline.run.dask_executor import DaskExecutor, scheduler_address

        if scheduler is not None:
            scheduler_address(scheduler)  # a bad address says so before Dask is imported
        return DaskExecutor(scheduler, workers, warm)
    raise InputError(f"unknown executor {kind!r}; choose one of {', '.join(EXECUTORS)}")
