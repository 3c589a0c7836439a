"""A run whose output is complete already: `--resume` with no checkpoint, beside a Parquet
output whose metadata records a run of the same inputs (as they are now) and options, leaves
the output as it is (a note says so) instead of doing the work again.

    finished = finished_output(out, "parquet", identity)   # (rows, counts by verdict) or None

The checkpoint puts what its `run.json` said into the output's metadata (`RUN_KEY`) when it
joins it (`checkpoint.py`); CSV and JSON Lines outputs hold no metadata, so a `--resume` of
one that is complete runs again.
"""

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.runinfo import METADATA_KEY

RUN_KEY = "checkpoint"  # the output's metadata: what the run's checkpoint said of it


def finished_output(
    output: Path, fmt: str, identity: dict[str, Any]
) -> tuple[int, dict[str, int]] | None:
    """The rows and the rows per verdict of a complete Parquet `output` whose metadata records a
    run of `identity` (the inputs as they are now, the options); None when it is not one
    (another format, another run, damaged, or no metadata to tell)."""
    if fmt != "parquet" or not output.is_file():
        return None
    try:
        meta = pq.read_metadata(output)
        recorded = json.loads((meta.metadata or {}).get(METADATA_KEY, b"{}")).get(RUN_KEY)
        if recorded != {**identity, "format": fmt}:
            return None
        verdicts = pq.read_table(output, columns=["verdict"]).column(0)
    except (OSError, ValueError, KeyError, AttributeError, pa.ArrowException):
        return None
    import polars as pl  # off the path of a run that is not resumed

    counted = pl.Series(verdicts).cast(pl.String).value_counts()
    return meta.num_rows, dict(zip(counted[:, 0].to_list(), counted[:, 1].to_list(), strict=True))


__all__ = ["RUN_KEY", "finished_output"]
