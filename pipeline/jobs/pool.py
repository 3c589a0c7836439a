"""Warm worker processes for the in-memory API: `solve_batch(puzzles, workers=2)` and
`validate_puzzles(puzzles, workers=2)` split their puzzles into chunks and map them over a pool
of worker processes that stays up between calls, so a notebook pays the start-up once.

    map_chunks(solve_record_batch, batch, workers=2, options)   # [table, table, ...] in order

One `LocalExecutor` per worker count, spawned and warmed (kernels loaded) on first use, reused
by every later call with that count, closed at interpreter exit or by `close_pools()`. A pool
that lost a worker or saw Ctrl-C is ended by its executor and spawned again on the next call.
Calls that share a pool take turns (one lock per pool). Chunks are copied out of the batch
before they travel: a pickled slice of an Arrow array carries its whole buffer (a 1,000-row
slice of a 100,000-row string column pickles to 8.5 MB, the copy to 85 KB).

Scripts (not notebooks) that use workers need the usual `if __name__ == "__main__":` guard:
the workers are spawned, and a spawned process imports the script's main module.
"""

import atexit
import math
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

import pyarrow as pa

from pipeline.jobs.executors import LocalExecutor, warm_kernels

MIN_CHUNK_ROWS = 2_000  # a chunk of fewer rows is not worth the trip to a worker
MAX_CHUNK_ROWS = 50_000  # bounds the memory of the chunks in flight
CHUNKS_PER_WORKER = 4  # several chunks a worker: a slow chunk does not leave the others idle

_pools: dict[int, tuple[LocalExecutor, threading.Lock]] = {}
_pools_lock = threading.Lock()
_closed_at_exit: list[bool] = []  # [True] once close_pools is registered with atexit


def chunk_rows(rows: int, workers: int | None) -> int:
    """Rows per chunk for `rows` puzzles on `workers` processes (`rows` itself: one chunk)."""
    if workers is None or workers == 1:
        return max(rows, 1)
    share = math.ceil(rows / (workers * CHUNKS_PER_WORKER))
    return min(MAX_CHUNK_ROWS, max(MIN_CHUNK_ROWS, share))


def map_chunks(
    fn: Callable[..., Any], batch: pa.RecordBatch, workers: int | None, *args: Any
) -> list[Any]:
    """`fn(chunk, *args)` for consecutive chunks of `batch`, in order: one chunk in this
    process when `workers` is None or 1 or the batch is small (under two chunks), else chunks
    on the warm pool of `workers` processes. `fn` must be a module-level (picklable) function."""
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise ValueError(f"workers must be None or at least 1, not {workers!r}")
    size = chunk_rows(batch.num_rows, workers)
    if batch.num_rows <= size:
        return [fn(batch, *args)]
    assert workers is not None
    chunks = (_copy(batch.slice(start, size)) for start in range(0, batch.num_rows, size))
    executor, lock = _pool(workers)
    with lock:
        return list(executor.map_ordered(fn, chunks, *args))


def close_pools() -> None:
    """Let every warm pool's workers go (they are spawned again when next needed)."""
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for executor, lock in pools:
        with lock:
            executor.close()


def _pool(workers: int) -> tuple[LocalExecutor, threading.Lock]:
    """The pool of `workers` processes, started (and warmed) on first use."""
    with _pools_lock:
        if not _closed_at_exit:
            atexit.register(close_pools)
            _closed_at_exit.append(True)
        if workers not in _pools:
            warm = partial(warm_kernels, ("fast",))  # other strategies load on first use
            _pools[workers] = (LocalExecutor(workers, warm), threading.Lock())
        executor, lock = _pools[workers]
    with lock:
        executor.start()  # at once if already up; a pool ended by an error starts again
    return executor, lock


def _copy(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A slice of a batch as a batch of its own buffers (what a worker is sent)."""
    columns = [pa.concat_arrays([column]) for column in batch.columns]
    return pa.RecordBatch.from_arrays(columns, schema=batch.schema)
