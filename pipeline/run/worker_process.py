"""One worker process of `--executor processes`, and the two pipes it shares with this process
(tasks in, results out): nothing else is shared, so every way a run can stop stays bounded.

    spawn_worker(get_context("spawn"), warm, "sudoku-process-0", pool)   # appended to `pool`
    worker = pool[-1]
    worker.wait_ready()                       # its kernels are loaded
    worker.send((0, fn, (item, *args)))       # a task: (index, function, arguments)
    index, ok, value = worker.receive()       # its outcome: the result, or the task's error
    worker.stop(); worker.kill()              # let it go; or end it at once

Why not `concurrent.futures.ProcessPoolExecutor`: its workers write to one shared result queue,
read by a manager thread of this process. A worker killed in the middle of writing a result
(kill -9, the OOM killer, or the pool's own `terminate()` after Ctrl-C) leaves that thread
reading the rest of the message forever: the run waits silently for a batch that never comes,
or, after Ctrl-C, the interpreter's exit waits for that thread forever, with zombie workers
(tests/test_executors.py shows both). Here a worker that dies closes the only write end of its
result pipe, so this process reads EOF and says the worker is lost; and it runs no thread of
its own, so after `kill()` nothing is left to wait for at exit.

Signals: a terminal's Ctrl-C goes to the whole process group, workers included. While a
worker is forked, handed its start-up data and counted among the pool's (`spawn_worker`),
SIGINT and SIGTERM are held over (their handlers deferred to the end of it: blocking them in
this thread alone does not stop another thread taking them) and blocked in this thread. A
Ctrl-C or SIGTERM (a KeyboardInterrupt here) in the middle left a worker reading a cut pipe,
which printed `EOFError: Ran out of input` from multiprocessing's spawn_main after this
process's one line, or a worker nobody would stop. The worker inherits the mask, so a Ctrl-C
while it imports cannot print a KeyboardInterrupt traceback either; once started it ignores
SIGINT (leaving it to this process) and takes SIGTERM again. (multiprocessing's resource
tracker, which the first spawn of a process starts, unblocks both behind its back: it is
started first.) Nothing slow is done meanwhile: this process waits for its workers in
`multiprocessing.connection.wait`, which a Ctrl-C interrupts at once.

A worker ends when its task pipe closes: this process told it to (`stop()`) or is gone (kill -9
included; it then ends at once, even mid-batch, instead of holding the terminal's stderr open).
"""

import os
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext
from multiprocessing.reduction import ForkingPickler
from typing import Any

from pipeline import waiting
from pipeline.errors import ExecutorLost
from pipeline.run.heap import keep_freed_memory

READY = "ready"
FAILED = "failed"  # the worker could not load its kernels


class RemoteTraceback(Exception):
    """Where a task failed, in its worker: the `__cause__` of the error this process raises."""

    def __str__(self) -> str:
        return str(self.args[0])


class WorkerProcess:
    """A started worker: its process and this process's ends of its two pipes."""

    def __init__(self, process: Any, tasks: Connection, results: Connection) -> None:
        self.process = process
        self.tasks = tasks
        self.results = results
        self.busy = 0  # tasks sent whose outcome has not come back
        self._ended = False

    @property
    def sentinel(self) -> int:
        """Ready (for `wait`) once the process has ended."""
        return int(self.process.sentinel)

    def wait_ready(self) -> None:
        """Return once the worker has loaded its kernels; `ExecutorLost` if it dies first."""
        while True:
            ready = waiting.ready([self.results, self.sentinel])
            if self.results in ready:
                message = self._receive("a worker process died while starting")
                if message == READY:
                    return
                if isinstance(message, tuple) and message[0] == FAILED:
                    raise ExecutorLost(f"a worker process could not start: {message[1]}")
            elif self.sentinel in ready:
                raise ExecutorLost("a worker process died while starting")

    def send(self, task: tuple[int, Callable[..., Any], tuple] | None) -> None:
        """Hand the worker a task (None: no more); `ExecutorLost` if it is gone."""
        try:
            self.tasks.send(task)
        except OSError:  # a broken pipe: the worker died
            raise lost() from None
        if task is not None:
            self.busy += 1

    def receive(self) -> tuple[int | None, bool, Any]:
        """The outcome of the worker's oldest task: `(index, True, result)`, or `(index, False,
        error)` with the error of the task (raise it); `ExecutorLost` if the worker died."""
        index, ok, value = self._receive(None)
        self.busy -= 1
        if not ok:
            error, where = value
            error.__cause__ = RemoteTraceback(where)
            value = error
        return index, ok, value

    def _receive(self, died: str | None) -> Any:
        try:
            return self.results.recv()
        except (EOFError, OSError):  # the worker ended, maybe in the middle of a message
            raise (ExecutorLost(died) if died else lost()) from None

    def stop(self, seconds: float) -> None:
        """Let the worker go (it has nothing left to do) and wait up to `seconds` for it."""
        try:
            self.tasks.send(None)
        except OSError:
            pass
        self.process.join(seconds)
        self.kill()

    def kill(self) -> None:
        """End the worker at once (SIGKILL: it holds nothing worth saving), reap it, close the
        pipes."""
        if self._ended:
            return
        self._ended = True
        self.tasks.close()
        self.results.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        if self.process.exitcode is not None:
            self.process.close()  # its sentinel's file descriptor


def lost() -> ExecutorLost:
    return ExecutorLost("a worker process died (out of memory? try a smaller --batch-size)")


def spawn_worker(
    context: SpawnContext,
    warm: Callable[[], None] | None,
    name: str,
    pool: list[WorkerProcess],
) -> None:
    """Start a worker process (`warm` loads its kernels) and append it to `pool`, with no
    signal in between: see the module docstring."""
    if os.name == "posix":  # the tracker a spawn starts unblocks SIGINT: start it first
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    task_reader, task_writer = context.Pipe(duplex=False)
    result_reader, result_writer = context.Pipe(duplex=False)
    process = context.Process(
        target=_serve, args=(task_reader, result_writer, warm), name=name, daemon=True
    )
    try:
        with _signals_held(), _signals_blocked():
            process.start()
            pool.append(WorkerProcess(process, task_writer, result_reader))
    finally:  # the worker holds its own ends now
        task_reader.close()
        result_writer.close()


_HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_blocked() -> Iterator[None]:
    """The signals blocked in this thread: the worker forked meanwhile inherits the mask."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no process groups to worry about
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(_HELD))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held over until the block is done, then handled as they would have
    been. Blocking them in this thread is not enough: another thread of the process (pyarrow's,
    numpy's) takes the signal, and Python runs the handler in the main thread all the same.
    Handlers can only be set in the main thread; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    previous = {s: signal.getsignal(s) for s in _HELD}
    for signum, handler in previous.items():
        if handler not in (signal.SIG_IGN, None):  # one ignored stays ignored
            signal.signal(signum, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if handler is not None:
                signal.signal(signum, handler)
        for signum in dict.fromkeys(came):
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)  # a KeyboardInterrupt, as it would have been
            else:
                os.kill(os.getpid(), signum)  # the default action, now


# --- in the worker ----------------------------------------------------------------------------


def _serve(tasks: Connection, results: Connection, warm: Callable[[], None] | None) -> None:
    """A worker's life: leave Ctrl-C to the parent, load the kernels, say so, then run the
    tasks as they come, in order, until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # blocked while it was forked: see the docstring
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    keep_freed_memory()  # the worker's batches reuse the memory the last one freed
    inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    threading.Thread(target=_receive_tasks, args=(tasks, inbox), daemon=True).start()
    try:
        try:
            if warm is not None:
                warm()
        except Exception as e:  # noqa: BLE001 - told to the parent, which ends the run
            results.send((FAILED, f"{type(e).__name__}: {e}"))
            return
        results.send(READY)
        while (task := inbox.get()) is not None:
            _send_outcome(results, *_run(task))
    except OSError:  # the parent is gone: nobody left to tell
        pass
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # no interpreter teardown (numba, pyarrow): the parent waits for this


def _receive_tasks(tasks: Connection, inbox: "queue.SimpleQueue[Any]") -> None:
    """Take the parent's tasks as they come (so that its sends never wait for a batch to end),
    until None; end the process at once when the parent is gone."""
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):  # the parent died (kill -9, OOM) without a word
            os._exit(1)
        except Exception as e:  # noqa: BLE001 - a task that cannot be unpickled here
            task = (None, _raise, (e,))
        inbox.put(task)
        if task is None:
            return


def _raise(error: BaseException) -> None:
    raise error


def _run(task: tuple[int | None, Callable[..., Any], tuple]) -> tuple[int | None, bool, Any]:
    index, fn, args = task
    try:
        return index, True, fn(*args)
    except BaseException as e:  # noqa: BLE001 - handed to the parent, which raises it
        return index, False, (e, traceback.format_exc())


def _send_outcome(results: Connection, index: int | None, ok: bool, value: Any) -> None:
    try:
        message = ForkingPickler.dumps((index, ok, value))
    except Exception as e:  # noqa: BLE001 - a result or an error that cannot be pickled
        error = RuntimeError(f"a worker's {'result' if ok else 'error'} cannot be sent: {e}")
        message = ForkingPickler.dumps((index, False, (error, traceback.format_exc())))
    results.send_bytes(message)  # what `send` does, once pickled
