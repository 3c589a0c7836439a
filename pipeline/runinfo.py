"""What every output file records about the run that made it: the machine, the library
versions, the input and the options (JSON in the Parquet key-value metadata, key
`sudoku_pipeline`, read back by `report`)."""

import os
import platform
from pathlib import Path
from typing import Any

from pipeline.dataset import Dataset


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def versions() -> dict[str, str]:
    """This tool's version and those of the libraries that shape its results and speed."""
    import numba
    import numpy
    import polars
    import pyarrow

    from pipeline import __version__

    return {
        "sudoku_pipeline": __version__,
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": numpy.__version__,
        "polars": polars.__version__,
        "pyarrow": pyarrow.__version__,
    }


def machine() -> dict[str, Any]:
    """`versions` and `cpu` entries of the metadata."""
    return {"versions": versions(), "cpu": {"model": cpu_model(), "count": os.cpu_count()}}


def run_metadata(
    command: str,
    ds: Dataset,
    rows: int,
    options: dict[str, Any],
    started_at: str,
    wall_s: float,
    rows_per_s: float | None,
    workers: int,
    executor: str,
    scheduler: str | None,
    **extra: Any,
) -> dict[str, Any]:
    """The metadata of a file job (`solve`, `validate`) over the dataset `ds`."""
    return {
        "command": command,
        "options": options,
        "input": {
            "path": str(ds.path),
            "format": ds.format,
            "compression": ds.compression,
            "size_bytes": ds.size_bytes,
            "rows": rows,
        },
        "started_at": started_at,
        "wall_s": round(wall_s, 3),
        "rows_per_s": None if rows_per_s is None else round(rows_per_s, 1),
        "workers": workers,
        "executor": executor,
        "scheduler": scheduler,
        **machine(),
        **extra,
    }
