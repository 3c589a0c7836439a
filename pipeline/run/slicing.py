"""Whether a run on Dask is sliced (its workers read their own slices and keep their own
parts: `sliced.SlicedRun`), and, when it is not, why the client reads and writes, as the one
line a run says (`on_the_client`).

    if sliced(job): ...                    # `run.loop.running`
    said = on_the_client(job)              # "on Dask, this process reads ... (why); ..."
"""

import os

from pipeline.errors import printable
from pipeline.io.slices import sliceable
from pipeline.io.url_slices import why_not_sliced
from pipeline.run.job import Job
from pipeline.run.join_arrays import ARRAY_FORMATS

SWITCH = "SUDOKU_PIPELINE_DASK_SLICES"  # "0": the client reads and writes every byte (before)
KEPT_FORMATS = ("parquet", "csv", "jsonl")  # what a checkpoint keeps parts of


def sliced(job: Job) -> bool:
    """Whether `job` runs sliced: the Dask executor, a resumable job writing a file, or a job
    whose parts are joined as they come (augment) writing a file or a folder of arrays (its
    parts laid out by `join_arrays`), or a job whose whole-corpus steps run on the workers
    (`Job.shards`: validate, writing such a file; split, writing its folder); inputs that the
    workers can open (files, and URLs read by ranges: not standard input or a pipe);
    `SUDOKU_PIPELINE_DASK_SLICES=0` keeps the client reading and writing (as before, for
    measuring)."""
    spec = job.spec
    return (
        job.executor_kind == "dask"
        and os.environ.get(SWITCH, "1") != "0"
        and (
            (spec.sink == "checkpoint" and spec.resumable)
            or (spec.sink == "parts" and job.format in (*KEPT_FORMATS, *ARRAY_FORMATS))
            or (spec.sink == "tables" and job.shards and job.format in KEPT_FORMATS)
            or (spec.sink == "folder" and job.shards)
        )
        and job.output is not None
        and job.inputs is not None
        and all(sliceable(ds) for ds in job.inputs.datasets)
    )


# Why a job reads and writes on the client whatever its inputs (and what its workers do)
_WHOLE = {
    "validate": "a training input (--against) is one the workers cannot read themselves",
}
_WORK = {"solve": "solve", "validate": "check", "score": "score", "augment": "augment"}


def on_the_client(job: Job) -> str | None:
    """Why a run on Dask reads its inputs and writes its output in this process (the client),
    the workers only working on the batches it sends them, as one line (`note: ...`); None
    when its workers read and write themselves (`sliced`), or it is not on Dask."""
    if job.executor_kind != "dask" or job.inputs is None or sliced(job):
        return None
    datasets = job.inputs.datasets
    reads = datasets[0].location if len(datasets) == 1 else "the inputs"
    cannot = next((ds for ds in datasets if not sliceable(ds)), None)
    if os.environ.get(SWITCH, "1") == "0":
        why = f"{SWITCH}=0"
    elif cannot is not None:
        reads = "standard input" if cannot.from_stdin else cannot.location
        if cannot.url is not None:
            why = why_not_sliced(cannot)
        else:
            why = "the workers cannot open a stream"
    elif job.output is None:
        why = "the output goes to stdout"
    else:
        why = _WHOLE.get(job.spec.name, f"{job.spec.name} writes its output here")
    work = _WORK.get(job.spec.name, "work on")
    return (
        f"on Dask, this process reads {printable(reads)} and writes the output itself ({why}); "
        f"the workers {work} the batches it sends them"
    )
