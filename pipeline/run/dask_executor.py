"""The Dask executor: the same ordered, bounded map as `ThreadExecutor`, on a Dask cluster.

`map_ordered`: the client (this process) reads the input and writes the output; workers only
solve batches. `map_unordered` and `run_on_workers` serve a sliced run (`run.sliced`: solve and
score to a file, augment to a Parquet file), where workers read their own slices and keep
their own parts.
With a scheduler address it joins a running cluster (`dask scheduler` + `dask worker` on any
machines that have this package installed); without one it starts a `LocalCluster` of process
workers on this machine. Dask reschedules the tasks of a worker that dies; a scheduler that goes
away ends the run with `ExecutorLost` (the run keeps its checkpoint for `--resume`).
"""

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pipeline.errors import ExecutorLost, InputError, first_line

INSTALL_HINT = "pip install 'sudoku-pipeline[dask]'"
LOST_AFTER_S = 20.0  # how long the scheduler may stay unreachable before the run gives up
CONNECT_S = 15.0  # how long connecting may take, whatever answers at the address
SCHEMES = ("tcp", "tls", "inproc", "ucx", "ws", "wss")  # what Dask's comms speak
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[^\]]+\]|[^:/\s]+):(?P<port>\d+)/?")


def scheduler_address(text: str) -> str:
    """A Dask scheduler's address from `--scheduler`: `tcp://HOST:PORT` (or `HOST:PORT`, or
    another of Dask's schemes). Raises `InputError` saying what is wrong, before connecting."""
    match = _ADDRESS.fullmatch(text.strip())
    scheme = match and match["scheme"]
    if text.strip().lower().startswith(("http://", "https://")):
        raise InputError(
            f"--scheduler {text}: a web address; the scheduler's is tcp://HOST:PORT (port 8786 "
            "by default; 8787 is its dashboard)"
        )
    if match is None or (scheme is not None and scheme not in SCHEMES):
        raise InputError(
            f"--scheduler {text}: not a Dask scheduler address; expected tcp://HOST:PORT"
        )
    if not 0 < int(match["port"]) < 65536:
        raise InputError(f"--scheduler {text}: port {match['port']} is out of range")
    return text.strip() if scheme else f"tcp://{text.strip()}"


def _connect_within(client: Callable[..., Any], address: str, seconds: float) -> Any:
    """`Client(address)`, or `InputError` within `seconds` whatever answers there: something
    that is not a Dask scheduler (a web server, say) can make Dask wait for minutes, or read a
    garbage message length and fail allocating it."""
    outcome: list[Any] = []

    def connect() -> None:
        try:
            outcome.append(client(address, timeout=f"{seconds}s"))
        except BaseException as e:  # noqa: BLE001 - MemoryError, CommClosedError, ...
            outcome.append(e)

    thread = threading.Thread(target=connect, name="dask-connect", daemon=True)
    thread.start()
    thread.join(seconds + 5)
    if not outcome:
        raise InputError(f"no Dask scheduler answered at {address} within {seconds + 5:.0f} s")
    if isinstance(outcome[0], BaseException):
        e = outcome[0]
        reason = first_line(e)
        if isinstance(e, MemoryError) or "deserialize" in reason.lower():
            reason = "what answers there does not speak Dask's protocol"
        raise InputError(f"cannot reach the Dask scheduler at {address}: {reason}")
    return outcome[0]


class DaskExecutor:
    """Batches as Dask tasks; at most `in_flight_per_worker` per worker thread at a time."""

    def __init__(
        self,
        scheduler: str | None = None,
        workers: int | None = None,
        warm: Callable[[], None] | None = None,
        in_flight_per_worker: int = 2,
    ) -> None:
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise InputError(f"--executor dask needs Dask: {INSTALL_HINT}") from None
        self.scheduler = None if scheduler is None else scheduler_address(scheduler)
        self.requested_workers = workers
        self.in_flight_per_worker = in_flight_per_worker
        self._warm = warm
        self.workers = workers or 0  # worker threads, known once connected
        self._client: Any = None
        self._cluster: Any = None

    def _connect(self) -> Any:

        # distributed logs every reconnection attempt on stderr; the run says it in one line.
        for name in [*logging.root.manager.loggerDict, "distributed"]:
            if name.startswith("distributed"):
                logging.getLogger(name).setLevel(logging.CRITICAL)

        from distributed import Client, LocalCluster

        if self.scheduler is None:
            from pipeline.io.runinfo import usable_cpus

            n = self.requested_workers or usable_cpus()
            # Worker threads, not processes: the kernels, parsing and encoding release the GIL.
            # 300,000 hard rows, 2 workers: 4.6 s against 5.2 s with worker processes (local
            # threads: 4.2 s).
            self._cluster = LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=False,
                dashboard_address=":0",  # any free port: never clash with another cluster
                silence_logs=logging.ERROR,
            )
            return Client(self._cluster)
        return _connect_within(Client, self.scheduler, CONNECT_S)

    def start(self) -> None:
        """Connect (or start the LocalCluster), wait for a worker, load the kernels on every
        worker. Called before the progress bar shows; `map_ordered` calls it when needed."""
        if self._client is not None:
            return
        self._client = client = self._connect()
        if self.scheduler is not None:
            try:
                client.wait_for_workers(1, timeout=30)
            except TimeoutError:
                self.terminate()
                raise InputError(f"the Dask scheduler at {self.scheduler} has no workers") from None
        if self._warm is not None:
            client.run(self._warm)
        self.workers = sum(client.nthreads().values())

    def map_ordered(
        self, fn: Callable[..., Any], items: Iterable[Any], *args: Any
    ) -> Iterator[Any]:
        """Yield `fn(item, *args)` for each item, in the order of `items`."""
        from distributed import wait

        self.start()
        client = self._client
        try:
            max_in_flight = max(2, self.workers * self.in_flight_per_worker)
            pending: deque[Any] = deque()
            for item in items:
                pending.append(client.submit(fn, item, *args, pure=False))
                if len(pending) >= max_in_flight:
                    yield self._result(pending.popleft(), wait)
            while pending:
                yield self._result(pending.popleft(), wait)
        except BaseException:  # a lost cluster, Ctrl-C, or the consumer stopped early
            self.terminate()
            raise

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """Yield `fn(item)` for each item as each finishes (any order), at most
        `in_flight_per_worker` a worker thread at a time (`run.sliced`: slices that workers
        read and write themselves)."""
        from distributed import wait

        self.start()
        client = self._client
        try:
            max_in_flight = max(2, self.workers * self.in_flight_per_worker)
            items = iter(items)
            pending: set[Any] = set()
            unreachable_since = None
            while True:
                for item in items:
                    pending.add(client.submit(fn, item, pure=False))
                    if len(pending) >= max_in_flight:
                        break
                if not pending:
                    return
                try:
                    done, _ = wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    if client.status == "running":
                        unreachable_since = None
                        continue
                    unreachable_since = unreachable_since or time.monotonic()
                    if time.monotonic() - unreachable_since > LOST_AFTER_S:
                        raise self._lost() from None
                    continue
                except Exception as e:  # noqa: BLE001 - CommClosedError, ...
                    raise self._lost(e) from None
                for future in done:
                    pending.discard(future)
                    yield self._result(future, wait)
        except BaseException:  # a lost cluster, Ctrl-C, or the consumer stopped early
            self.terminate()
            raise

    def run_on_workers(self, fn: Callable[..., Any], *args: Any) -> dict[str, Any]:
        """`fn(*args)` on every worker, by worker address (checks before any work)."""
        self.start()
        try:
            return dict(self._client.run(fn, *args))
        except Exception as e:  # noqa: BLE001 - a worker or the scheduler went away
            raise self._lost(e) from None

    def close(self) -> None:
        """The job is done: disconnect (and stop the LocalCluster, when this started one)."""
        self.terminate()

    def _lost(self, error: BaseException | None = None) -> ExecutorLost:
        where = f"the Dask scheduler at {self.scheduler}" if self.scheduler else "the Dask cluster"
        detail = f" ({type(error).__name__})" if error is not None else ""
        return ExecutorLost(f"lost {where}{detail}")

    def _result(self, future: Any, wait: Callable[..., Any]) -> Any:
        """The future's result; `ExecutorLost` once the scheduler is gone for good."""
        unreachable_since = None
        while True:
            try:
                wait(future, timeout=1.0)
                break
            except TimeoutError:
                if self._client.status == "running":
                    unreachable_since = None
                    continue
                unreachable_since = unreachable_since or time.monotonic()
                if time.monotonic() - unreachable_since > LOST_AFTER_S:
                    raise self._lost() from None
            except Exception as e:  # noqa: BLE001 - CommClosedError, FuturesCancelledError, ...
                raise self._lost(e) from None
        if future.status == "error":
            return future.result()  # raises the task's own exception
        if future.status != "finished":
            raise self._lost()
        try:
            return future.result()
        except Exception as e:  # noqa: BLE001 - the scheduler went away while gathering
            raise self._lost(e) from None

    def terminate(self) -> None:
        client, self._client = self._client, None
        cluster, self._cluster = self._cluster, None
        if client is not None:
            try:
                client.close(timeout=5)
            except Exception:  # noqa: BLE001 - closing a client whose scheduler is gone
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=5)
            except Exception:  # noqa: BLE001
                pass
