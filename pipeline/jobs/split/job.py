"""The split job: input files in, a folder of leak-free splits and their manifest out.

    manifest = split_file("corpus.csv", "splits", fractions="0.8,0.1,0.1", seed=1)

Every batch is solved (uniqueness proved), given its canonical group and rated when the split
is stratified by difficulty or grade, on the shared run loop (`pipeline.run`: threads, worker
processes or Dask); the workers send back only the rows with one solution, narrowed to the
columns written (`batch`). The parent spills them, in input order, to the folder being made
(the run loop's `folder` sink) and keeps only what the cut needs (about 40 bytes a kept row),
cuts the groups (`plan.cut`), writes each split from the spill in bounded memory (`spill`)
and the manifest (`folder`); the run loop puts the folder in place whole.
"""

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Unpack

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.inputs import expand
from pipeline.io.url_slices import UrlFile
from pipeline.jobs import JOBS
from pipeline.jobs.solve.batch import SolveOptions
from pipeline.jobs.split.batch import (
    added_columns,
    empty_part,
    solve_options,
    split_task,
)
from pipeline.jobs.split.folder import check_folder, files_of, write_manifest, written_files
from pipeline.jobs.split.manifest import Digests, SplitManifest, file_identity, local_inputs
from pipeline.jobs.split.options import (
    DUPLICATE,
    FORMATS,
    GROUPED_FORMATS,
    RATING,
    SplitOptions,
)
from pipeline.jobs.split.plan import SplitPlan
from pipeline.jobs.split.sharded import ShardedSplit
from pipeline.jobs.split.spill import SPILL, KeptRows, write_splits
from pipeline.run.job import Job, JobOptions, start_job
from pipeline.run.loop import running
from pipeline.run.parts import Task

JOB = JOBS["split"]


def split_file(
    inputs: str | Path | list[str | Path],
    output: str | Path,
    *,
    fractions: str | Sequence[float] = (0.8, 0.1, 0.1),
    names: str | Sequence[str] | None = None,
    seed: int = 0,
    stratify: str | None = None,
    max_nodes: int | None = None,
    subsample: int | None = None,
    augment: int = 0,
    min_rating: float | None = None,
    **options: Unpack[JobOptions],
) -> SplitManifest:
    """Split the puzzles of `inputs` (files, `-` for stdin, quoted globs) into the folder
    `output`: `<name>.parquet` per split (`format="npy"`: a folder `<name>/` of `.npy` files,
    one per column; `format="hrm"`: a folder `<name>/` in the layout HRM's and TRM's
    `PuzzleDataset` loads, `io.hrm_folders`, and `identifiers.json`) and `manifest.json`.
    See `pipeline.split` for what a split does; here the rows of several inputs are one
    corpus, each row's input named in `source` (an input's own `source` column, as
    sudoku-extreme's, is then `input_source`; with one input it is kept as `source`).

    What HRM's `build_sudoku_dataset.py` does, as options: `min_rating` leaves out rows whose
    `rating` column is below it (or empty) before anything else; `subsample` keeps that many
    rows of the training split (the first), drawn by the seed; `augment` (hrm only) makes each
    of its rows a group of itself and that many random symmetric copies (its solution moved
    alike), drawn by the seed: the other splits are never augmented.

    `options`: how to read the inputs and run the job, as for `solve_file` (`JobOptions`;
    `format` is parquet or npy, `force` replaces a folder that holds something else than an
    earlier split). Returns the manifest. Raises `InputError` (its message one line) for a
    bad file, column, option or output folder; `RunFailed`, `RunInterrupted` as solve does
    (nothing is kept: the folder is written at the end, whole).
    """
    try:
        split = SplitOptions.parse(
            fractions,
            names,
            seed,
            stratify,
            subsample=subsample,
            augment=augment,
            min_rating=min_rating,
        )
        search = solve_options(split.rate, max_nodes)
    except ValueError as e:
        raise InputError(str(e)) from None
    fmt = options.pop("format", None) or "parquet"
    if fmt not in FORMATS:
        raise InputError(f"unknown split format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if split.augment and fmt not in GROUPED_FORMATS:
        raise InputError(
            f"--augment needs a format that holds groups of copies (hrm), not "
            f"{fmt}; or run augment on the training split's file"
        )
    names = expand(inputs)
    folder = check_folder(output, inputs=names, force=options.get("force", False))
    job = start_job(
        JOB,
        names,
        folder,
        {**options, "format": fmt},
        kernels=search.kernels(),
        reserved=added_columns(split.rate),
        expanded=True,
        shards=True,  # on Dask: the cut's steps on the workers (`sharded`)
    )
    assert job.inputs is not None
    if split.needs_rating and RATING not in job.inputs.first.extra_schema.names:
        asked = "--stratify rating" if split.stratify == RATING else "--min-rating"
        raise InputError(
            f"{asked} needs a column named {RATING} in the input; it has "
            f"{', '.join(job.inputs.first.extra_schema.names) or 'none'} "
            "besides the puzzles"
        )
    return _run(job, split, search, fmt, max_nodes)


def _tasks(tasks: Iterator[Task], rows: Counter) -> Iterator[tuple[int | None, pa.RecordBatch]]:
    """The work: each batch with its input's index (several inputs); `rows` counts the rows
    read of each input."""
    for task in tasks:
        rows[task.source] += task.batch.num_rows
        yield (task.source if task.name is not None else None), task.batch


def _run(
    job: Job, split: SplitOptions, search: SolveOptions, fmt: str, max_nodes: int | None
) -> SplitManifest:
    """The split job, on the run loop: the kept rows spilled into the folder being made as
    they come (`spill`), cut from their small columns, each split written from the spill."""
    assert job.output is not None and job.inputs is not None
    left_out: Counter = Counter()
    read, wrong, by_input = 0, 0, Counter()
    sources = [str(name) for name in job.inputs.names] if job.inputs.several else None
    remotes = [ds.remote_file for ds in job.inputs.datasets]
    threads = job.local_threads()  # this machine's: copies, sha256s
    with running(job) as run, Digests(threads) as digests:
        assert run.folder is not None
        tmp = run.folder
        id_type = job.inputs.schema.field("id").type if job.inputs.has_ids else None
        empty = empty_part(
            id_type, split.rate, job.inputs.first.extra_schema, several=job.inputs.several
        )  # the columns of an empty corpus
        sharded = ShardedSplit(run, split, search, sources) if run.sliced else None
        if sharded is not None:  # on Dask: the workers keep, shuffle and write the rows
            read, wrong = sharded.keep(by_input, left_out)
            split_of, groups, strata = sharded.cut()
        else:
            digests.start(local_inputs(map(str, job.inputs.names), remotes))  # while solved
            kept = KeptRows(tmp / SPILL, split, sources)
            tasks = _tasks(run.tasks(), by_input)
            for part in run.map(split_task, tasks, search, split.min_rating):
                kept.add(part.table)
                left_out.update(part.left_out)
                read += part.rows
                wrong += part.wrong_solutions
            run.finish()
            if kept.schema is None:  # no batch at all
                kept.add(empty)
            split_of, groups, strata = kept.cut()
        wall = job.wall()
        rate = read / wall if wall > 0 else None
        settings = {"format": fmt, "max_nodes": max_nodes}
        metadata = job.metadata(read, split.as_dict() | settings, rate)
        identities: dict[int, dict[str, object]] = {}  # the inputs' sizes and sha256s
        if sharded is not None:
            written = sharded.write(split_of, tmp, metadata, empty, fmt)
            inputs: list[Path | UrlFile] = [
                Path(name) if remote is None else UrlFile.of(remote)
                for name, remote in zip(job.inputs.names, remotes, strict=True)
            ]
            outputs = written_files(tmp, files_of(split.names, fmt))
            sized = sharded.digests([*inputs, *outputs])  # on the workers: no byte read here
            digests.put({f: sized[f][1] for f in outputs})
            for i, name in enumerate(job.inputs.names):
                size, sha = sized[inputs[i]]
                identities[i] = {"path": str(name), "size_bytes": size, "sha256": sha}
            run.finish()
        else:
            written = write_splits(kept, split_of, tmp, fmt, metadata, threads, digests)
            kept.remove()
        if written.repeats:
            left_out[DUPLICATE] += written.repeats
        if written.train_groups is not None:
            groups[split.names[0]] = written.train_groups
        plan = SplitPlan({}, written.rows, groups, left_out, strata, written.subsampled_from)
        more = {"training": {"short": written.short}} if split.augment else {}
        manifest = SplitManifest.of(
            plan,
            split,
            read,
            settings,
            inputs=[
                (identities.get(i) or file_identity(str(name), remote, digests))
                | {"rows": by_input[i]}
                for i, (name, remote) in enumerate(zip(job.inputs.names, remotes, strict=True))
            ],
            wrong_input_solutions=wrong if job.inputs.first.solution_column is not None else None,
            output=str(job.output),
            files=files_of(split.names, fmt),
            wall_s=round(wall, 3),
            rows_per_s=None if rate is None else round(rate, 1),
            workers=job.executor.workers,
            executor=job.executor_kind,
            **more,
        )
        for name, examples in written.examples.items():  # hrm: copies included
            manifest.splits[name]["examples"] = examples
        write_manifest(tmp, manifest, digests)
        run.commit()
    return manifest
