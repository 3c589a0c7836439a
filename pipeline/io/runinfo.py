"""What every output file records about the run that made it: the machine, the library
versions, the input and the options (JSON in the Parquet key-value metadata, key
`sudoku_pipeline`, read back by `report`)."""

import math
import os
import platform
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pipeline.cpu import cpu_model, instructions
from pipeline.io.dataset import Dataset

METADATA_KEY = b"sudoku_pipeline"  # the Parquet key-value metadata entry of every output

PACKAGE = "sudoku-pipeline"
LIBRARIES = ("numba", "numpy", "polars", "pyarrow")


@cache
def package_version(name: str = PACKAGE) -> str:
    """An installed distribution's version, read from its metadata (nothing is imported: the
    versions of numba and friends cost no start-up); "0.0.0" when not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return "0.0.0"


def versions() -> dict[str, str]:
    """This tool's version and those of the libraries that shape its results and speed."""
    return {
        "sudoku_pipeline": package_version(),
        "python": platform.python_version(),
        **{name: package_version(name) for name in LIBRARIES},
    }


def usable_cpus() -> int:
    """The CPUs this process may use: its affinity (`taskset`), capped by a cgroup CPU quota
    (containers: `docker --cpus`, Kubernetes limits), at least 1."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)


def _cgroup_quota() -> float | None:
    """CPUs allowed by the cgroup (v2 `cpu.max`, else v1 `cfs_quota_us`), None without one."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
        return None if quota <= 0 or period <= 0 else quota / period
    except (OSError, ValueError):
        return None


def machine() -> dict[str, Any]:
    """`versions` and `cpu` entries of the metadata."""
    cpu = {
        "model": cpu_model(),
        "instructions": instructions(),
        "count": os.cpu_count(),
        "usable": usable_cpus(),
    }
    return {"versions": versions(), "cpu": cpu}


def _input(ds: Dataset, rows: int | None) -> dict[str, Any]:
    return {
        "path": ds.location,
        "format": ds.format,
        "compression": ds.compression,
        "size_bytes": ds.size_bytes,
        "rows": rows,
        "header": ds.has_header if ds.format in ("csv", "tsv") else None,  # first line: names
        "separator": ds.separator,  # CSV/TSV: given or sniffed
        "layout": ds.layout,  # a known layout recognised by its columns (sudoku-extreme, ...)
    }


def run_metadata(
    command: str,
    datasets: Dataset | list[Dataset],
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
    """The metadata of a file job (`solve`, `validate`) over its input(s): `input` describes
    the first (the only one, usually), `inputs` every one when there are several."""
    datasets = [datasets] if isinstance(datasets, Dataset) else datasets
    several = len(datasets) > 1
    meta = {
        "command": command,
        "options": options,
        "input": _input(datasets[0], None if several else rows),
        "started_at": started_at,
        "wall_s": round(wall_s, 3),
        "rows_per_s": None if rows_per_s is None else round(rows_per_s, 1),
        "workers": workers,
        "executor": executor,
        "scheduler": scheduler,
        **machine(),
        **extra,
    }
    if several:
        meta["inputs"] = [_input(ds, None) for ds in datasets]
        meta["rows"] = rows
    return meta
