"""What the tasks of a job on Dask leave in the checkpoint folder for each other (validate's
and split's rounds: `jobs.validate.sharded`, `jobs.split.sharded`): Arrow files, each written
whole under a temporary name and renamed (a task that runs twice writes the same bytes
twice), read back whole or a record batch at a time (only that batch's bytes are read).

    write_batches(folder / scratch_name("keys", 3), batches)    # on a worker
    batch = read_batch(folder / scratch_name("keys", 3), shard)  # on another
"""

import io
import socket
from pathlib import Path

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.run.parts import keep_bytes

# `run.kept_parts` knows these names as the checkpoint's own (cleared by the next run)
SCRATCH = "shard-{kind}-{number:06d}.{ext}"


def scratch_name(kind: str, number: int, ext: str = "arrow") -> str:
    """The name of scratch file `number` of `kind` (lower-case letters)."""
    return SCRATCH.format(kind=kind, number=number, ext=ext)


def write_batches(path: Path, batches: list[pa.RecordBatch] | list[pa.Table]) -> None:
    """An Arrow file of these record batches (a table: its batches), written whole; a write
    that fails is one line (`not_kept`)."""
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, batches[0].schema) as writer:
        for batch in batches:
            if isinstance(batch, pa.Table):
                writer.write_table(batch)
            else:
                writer.write_batch(batch)
    keep(path, sink.getvalue())


def keep(path: Path, data: bytes) -> None:
    """`data` written to `path` whole, or `not_kept`."""
    try:
        keep_bytes(path, data)
    except OSError as e:
        raise not_kept(path.parent, e) from None


def not_kept(folder: Path, error: OSError) -> InputError:
    """A write into the checkpoint folder that failed on a worker, as one line."""
    return InputError(
        f"{folder}: {error.strerror or error} on the worker at {socket.gethostname()}; nothing "
        "is kept (this command does not resume): once that is put right, run it again"
    )


def read_batch(path: Path, number: int) -> pa.RecordBatch:
    """Record batch `number` of an Arrow file."""
    with pa.OSFile(str(path), "rb") as source:
        return pa.ipc.open_file(source).get_batch(number)


def read_table(path: Path, schema: pa.Schema | None = None) -> pa.Table:
    """An Arrow file whole (cast to `schema`, when given)."""
    with pa.OSFile(str(path), "rb") as source:
        table = pa.ipc.open_file(source).read_all()
    return table if schema is None else table.cast(schema)


def clear(paths: list[Path]) -> None:
    """On a worker: delete these scratch files, once no task will read them again (the
    deleting of a corpus's worth of scratch is storage work, done where the data is, not on
    the client: measured 0.16 client CPU s per 1M rows of split when the client did it)."""
    for path in paths:
        path.unlink(missing_ok=True)
