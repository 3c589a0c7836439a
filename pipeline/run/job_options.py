"""What a job declares to the run layer (`JobSpec`: its entry in the job table), the options
every file job takes (`JobOptions`), and how its inputs are read (`ReadOptions`); `job.py`
starts a job from them.
"""

from dataclasses import asdict, dataclass
from typing import Any, Protocol, TypedDict


class JobSpec(Protocol):
    """What the run layer reads of a job's entry in the job table (`pipeline.jobs`)."""

    @property
    def name(self) -> str: ...  # the command: metadata, the progress bar, messages
    @property
    def suffix(self) -> str: ...  # the default output beside the input ("": none)
    @property
    def formats(self) -> tuple[str, ...]: ...  # what it writes (npy: a folder of arrays)
    @property
    def sink(self) -> str | None: ...  # `run.loop.SINKS`
    @property
    def resumable(self) -> bool: ...
    @property
    def counted(self) -> str | None: ...  # the column whose values a resume counts again


class JobOptions(TypedDict, total=False):
    """The options every file job takes as keywords.

    Reading: `column`, `solution_column` and `id_column` name columns (default: found by name
    or content); `separator` and `has_header` apply to CSV/TSV; `input_format` forces the
    input's format (csv, tsv, txt, parquet; stdin is sniffed otherwise). Writing: `format`
    (parquet, csv, jsonl; default: from the output's suffix), `force` (replace a file that is
    not a result of this tool). Running: `batch_size` rows per batch (bounds memory), `workers`
    (default: the CPUs this process may use), `progress` (a bar on stderr when it is a
    terminal), `executor` (`local`: threads here; `processes`: worker processes here; `dask`:
    the cluster at `scheduler`, or a LocalCluster of `workers` processes). `dataset`: the
    output (a `str` or a `Path`; default `<stem>.<suffix>/` beside the input) is a Parquet
    dataset folder, as `-o DIR/` asks on the command line (`pathlib.Path` drops a trailing
    `/`); a folder that is not empty and holds no earlier dataset of this tool is refused."""

    column: str | None
    solution_column: str | None
    id_column: str | None
    separator: str | None
    has_header: bool | None
    input_format: str | None
    format: str | None
    force: bool
    batch_size: int | None
    workers: int | None
    progress: bool
    executor: str
    scheduler: str | None
    dataset: bool


READING = ("column", "solution_column", "id_column", "separator", "has_header", "input_format")


@dataclass(frozen=True)
class ReadOptions:
    """How to read an input: which columns, which separator, whether it has a header, which
    format (None: found from the file)."""

    column: str | None = None
    solution_column: str | None = None
    id_column: str | None = None
    separator: str | None = None
    has_header: bool | None = None
    input_format: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def dataset_options(self) -> dict[str, Any]:
        """The keywords of `open_dataset`."""
        options = self.as_dict()
        fmt = options.pop("input_format")
        return options | ({"format": fmt} if fmt is not None else {})


__all__ = ["READING", "JobOptions", "JobSpec", "ReadOptions"]
