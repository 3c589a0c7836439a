"""Waits in the main thread that a signal can always end.

The system hands a process's signal (Ctrl-C, SIGTERM) to any of its threads that does not
block it: often a worker thread, pyarrow's or numba's. Python's handler then only marks the
signal, and runs in the main thread between two of its steps: a main thread asleep in a wait
without a timeout (a future's result, a thread's join, a pipe) sleeps on until what it waits
for comes, which with a solver hung in a batch is never. Each wait here wakes every
`POLL_S` and sleeps again, so that the handler runs within that time wherever the signal
landed; the wake-ups cost nothing one can measure (five a second).
"""

import threading
from collections.abc import Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

POLL_S = 0.2

T = TypeVar("T")


def result_of(future: "Future[T]") -> T:
    """`future.result()`, woken every `POLL_S` to let a signal's handler run."""
    while True:
        try:
            return future.result(timeout=POLL_S)
        except FutureTimeout:
            continue


def join(thread: threading.Thread) -> None:
    """`thread.join()`, woken every `POLL_S` to let a signal's handler run."""
    while thread.is_alive():
        thread.join(POLL_S)


def ready(objects: Iterable[Any]) -> list[Any]:
    """`multiprocessing.connection.wait(objects)`: those ready (pipes, sentinels), woken every
    `POLL_S` to let a signal's handler run."""
    from multiprocessing.connection import wait

    waiting = list(objects)
    while not (found := wait(waiting, timeout=POLL_S)):
        continue
    return found
