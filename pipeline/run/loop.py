"""The run loop: the one skeleton every job runs inside, so that no job takes a lock, sets a
signal handler, starts workers or opens its output itself.

    job = start_job(JOBS["count"], "x.csv", None, options)     # `run.job`: checked, set up
    with running(job, schema, identity=lambda: job.identity(options)) as run:
        for part in run.map(count_part, run.tasks(), job.format):   # in input order
            run.write(part)                          # into the job's sink; the bar moves on
        run.finish()                                 # workers let go, the bar complete
        run.commit(job.metadata(run.rows, options, run.rate()))     # the output in place

For the block, `running` holds the output's lock (no second run writes it meanwhile), takes
SIGTERM as Ctrl-C, starts the workers (they load the job's kernels; a cluster that cannot be
reached leaves nothing behind), shows the progress bar and opens the sink that the job's
entry in the job table names (`SINKS`):

* `checkpoint`: parts kept beside an output file (`checkpoint.Checkpoint`) and joined at the
  end; a resumable job goes on from a stopped run's (`resume`: `run.resumed` says how far,
  `run.tasks()` starts there), and leaves a complete output of the same run as it is
  (`finished.finished_output`: no task left, nothing written); to stdout, parts written as
  they come;
* `parts`: parts joined into the output as they come (`io.writers.PartWriter`: a file,
  stdout, a folder of arrays);
* `tables`: tables the job makes here (`io.writers.TableWriter`), e.g. a findings file;
* `folder`: a folder the job fills itself (`run.folder`, beside the output), put in place
  whole at `commit`.

However the block ends early, the workers are stopped at once, the readers closed and what was
not committed removed (a resumable checkpoint stays, for `--resume`); then:

* workers or a cluster that went away (`ExecutorLost`) -> `RunFailed`, saying what the
  checkpoint keeps (rows done, and where) or that nothing is kept;
* Ctrl-C or SIGTERM -> `RunInterrupted`, the same way;
* anything else (an input that fails part-way: `InputError`) goes on as it is, a checkpoint
  that holds nothing removed.
"""

import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from pipeline.errors import ExecutorLost, InputError, RunFailed, RunInterrupted
from pipeline.io.output_folders import folder_in_making, put_in_place
from pipeline.io.sidecars import SPOOL, OutputLock, clear_stale_temporaries, findings_spool
from pipeline.io.text_columns import check_text_columns
from pipeline.io.writers import PartWriter, Spool, TableWriter
from pipeline.run.checkpoint import Checkpoint, Progress
from pipeline.run.finished import finished_output
from pipeline.run.job import HiddenBar, Job, sigterm_as_interrupt
from pipeline.run.join_arrays import ARRAY_FORMATS, skipped_in
from pipeline.run.parts import Part, Task, ramp_up
from pipeline.run.sliced import Kept, SlicedRun
from pipeline.run.slicing import on_the_client, sliced

if TYPE_CHECKING:
    from tqdm import tqdm

SINKS = ("checkpoint", "parts", "tables", "folder")
Sink = Checkpoint | PartWriter | TableWriter


class Run:
    """A job running: its workers up, its bar shown, its sink open. `read` counts the input
    rows `tasks()` handed out, `rows` the output rows written (a resumed run's included)."""

    def __init__(
        self, job: Job, schema: pa.Schema | None, total: int | None, unit: str, bar: bool = True
    ) -> None:
        self.job = job
        self.schema = schema
        self.resumed = Progress()
        self.read = self.rows = 0
        self.folder: Path | None = None  # the `folder` sink's, while it is being filled
        self.sink: Sink | None = None
        self.bar: tqdm | HiddenBar | None = None
        self._total, self._unit, self._shown = total, unit, bar
        self._open: list[Iterator[Any]] = []
        self.slicer: SlicedRun | None = None  # workers read and write their own (`sliced`)
        self._spool: Spool | None = None
        self._finished = self._committed = False

    def open(
        self, checkpoint: Checkpoint | None, identity: Callable[[], dict[str, Any]], group_rows: int
    ) -> None:
        """The job's sink, once the workers are up (`running`)."""
        job, target = self.job, self.job.target
        if checkpoint is not None:
            finished, dataset = None, checkpoint.dataset
            if job.resume and (dataset or not checkpoint.exists()):  # `finished.py` says why
                assert job.output is not None
                finished = finished_output(job.output, job.format, identity(), dataset)
            elif job.resume:  # joined, then a stop before the checkpoint's removal
                finished = checkpoint.joined_already(identity())
            if finished is not None:  # the work is done: the output stays as it is
                # a folder's checkpoint (`finished.py`): its parts are the folder's files
                cleared = f" (its checkpoint {checkpoint.folder} removed)"
                print(
                    f"note: {job.output}{os.sep if dataset else ''} is complete and its "
                    f"inputs and options are unchanged; left as it is"
                    f"{cleared if checkpoint.exists() else ''}",
                    file=sys.stderr,
                )
                checkpoint.remove()
                rows, counts = finished
                self.resumed = Progress(rows, source=1 << 62, counts=counts)  # no task left
            elif job.resume:
                names = self.schema.names if self.schema is not None else []
                gaps = self.slicer is not None  # slices end out of order
                self.resumed = checkpoint.resume(identity(), names, gaps)
                self.sink = checkpoint
                if self.slicer is not None:
                    self.resumed = self.slicer.prepare(self.resumed)
            else:
                if checkpoint.exists():
                    said = (
                        "starting over; discarding the checkpoint"
                        if job.spec.resumable
                        else "discarding the parts of an earlier run"
                    )
                    print(f"note: {said} at {checkpoint.folder}", file=sys.stderr)
                checkpoint.start(identity())
                self.sink = checkpoint
                if self.slicer is not None:
                    self.resumed = self.slicer.prepare(None)
        elif job.spec.sink in ("checkpoint", "parts") and target is not None:
            writers = job.local_threads()  # this machine's (HRM's folders)
            self.sink = PartWriter(target, self.schema, writers)
        elif job.spec.sink == "tables" and target is not None:
            assert self.schema is not None
            self.sink = TableWriter(target, self.schema, group_rows)
        self.read = self.rows = self.resumed.rows
        self.show_progress()

    @property
    def skipped(self) -> list[str]:
        """The columns a folder of arrays leaves out (text)."""
        sink = self.sink
        if isinstance(sink, Checkpoint) and sink.format in ARRAY_FORMATS:  # the workers'
            assert self.schema is not None
            return skipped_in(sink.format, self.schema)
        return sink.skipped if isinstance(sink, PartWriter | TableWriter) else []

    def show_progress(self) -> "tqdm | HiddenBar":
        """The progress bar (from the rows a resumed run had done)."""
        if self.bar is None:
            if self._shown:
                self.bar = self.job.progress_bar(self.resumed.rows, self._total, self._unit)
            else:
                self.bar = HiddenBar(self._total, self.resumed.rows)
        return self.bar

    def tasks(self, slow: bool = False) -> Iterator[Task]:
        """The inputs' batches as tasks, in order, from where a resumed run stopped. `slow`
        rows (rated): the first batches small (`parts.ramp_up`), so the bar moves soon."""
        inputs = self.job.inputs
        assert inputs is not None
        start, source, row = self.resumed.rows, self.resumed.source, self.resumed.next_row
        batches = inputs.batches(source, row)
        for index, batch in ramp_up(batches) if slow else batches:
            if index != source:
                source, row = index, 0
            self.read += batch.num_rows
            yield Task(start, index, inputs.names[index] if inputs.several else None, row, batch)
            start += batch.num_rows
            row += batch.num_rows

    @property
    def sliced(self) -> bool:
        """Whether the workers read their slices and keep their parts (`map_slices`)."""
        return self.slicer is not None

    def map_slices(self, fn: Callable[..., Any], *args: Any) -> Iterator[Kept]:
        """`fn(task, *args)` over every batch of the inputs, on workers that read their own
        slices and keep their own parts (`run.sliced`); yields each slice's `Kept` as it
        finishes (any order), to pass to `write`. Nothing when the output is complete."""
        bar = self.show_progress()
        if self.slicer is None or not isinstance(self.sink, Checkpoint):
            return
        self.read = bar.total = self.slicer.rows  # counted: the bar's total is exact
        results = self.slicer.results(fn, *args)
        self._open.append(results)
        for kept in results:
            yield kept
            bar.update(kept.rows)

    def map(
        self, fn: Callable[..., Any], tasks: Iterable[Any], *args: Any, advance: bool = True
    ) -> Iterator[Any]:
        """`fn(task, *args)` for each task on the job's workers, in the order of `tasks`; the
        bar moves on by each result's `rows` once the caller is done with it (`advance`)."""
        bar = self.show_progress()
        tasks = iter(tasks)
        results = self.job.executor.map_ordered(fn, tasks, *args)
        self._open += [results, tasks]
        for result in results:
            yield result
            if advance:
                self.job.advance(bar, result.rows)

    def advance(self, rows: int) -> None:
        """Move the bar on by `rows` (a job that counts its progress itself)."""
        self.job.advance(self.show_progress(), rows)

    def write(self, item: Part | Kept | pa.Table) -> None:
        """One part (or, into a `tables` sink, one table) into the sink, in order; or a
        slice's parts, kept already by a worker (`map_slices`)."""
        if isinstance(item, Kept):
            self.rows += item.written
            return
        if isinstance(item, pa.Table):
            assert isinstance(self.sink, TableWriter)
            self.sink.add(item)
            self.rows += item.num_rows
            return
        if isinstance(self.sink, Checkpoint):
            self.sink.add(item)
        else:
            assert isinstance(self.sink, PartWriter)
            self.sink.add(item.data, item.rows)
        self.rows += item.rows

    def start_with(self, head: bytes) -> None:
        """The joined output starts with `head`, before the parts the workers kept: a CSV
        header that no part carries (validate's, any of which may hold no row)."""
        assert isinstance(self.sink, Checkpoint)
        self.sink.head = head

    def spool(self) -> Spool:
        """The run's scratch file, for tables the job reads back (`io.writers.Spool`): beside
        the output (`.NAME.findings-PID.arrow`; for stdout, in the temporary folder), removed
        when the run ends; what killed runs left there is cleared first."""
        if self._spool is None:
            beside = self.job.output or Path(tempfile.gettempdir()) / "stdout"
            clear_stale_temporaries(beside, (SPOOL,))  # their PIDs have ended
            self._spool = Spool(findings_spool(beside))
        return self._spool

    def rate(self, rows: int | None = None) -> float:
        """`rows` (default: the output rows written by this run) a second, so far."""
        wall = self.job.wall()
        done = self.rows - self.resumed.rows if rows is None else rows
        return done / wall if wall > 0 else 0.0

    def finish(self) -> None:
        """Every batch is done: let the workers go (a folder of arrays' rows written by them
        first, `Checkpoint.lay_out`), and complete the bar."""
        if self._finished:
            return
        self._finished = True
        sink, spec = self.sink, self.job.spec
        if isinstance(sink, Checkpoint) and sink.format in ARRAY_FORMATS and spec.sink == "parts":
            assert self.slicer is not None and self.schema is not None  # the workers write it
            self.slicer.place()
            sink.lay_out(self.rows, self.schema, self.job.executor.map_unordered)
        self.job.executor.close()
        bar = self.show_progress()
        bar.total = bar.n
        bar.refresh()
        bar.close()

    def commit(self, metadata: dict[str, Any] | None = None) -> None:
        """Finish, then end the output with the run's `metadata` and put it in place (a
        checkpoint's parts joined, then removed; a folder renamed). A checkpoint must hold
        every input row (a resumable job) or every row written, without a gap. An interrupt
        while joining keeps the (complete) checkpoint: `--resume` joins again."""
        self.finish()
        sink, metadata = self.sink, metadata or {}
        empty = self.schema.empty_table() if self.schema is not None else pa.table({})
        # a folder the job filled: its checkpoint held only the workers' scratch (split's)
        joined = isinstance(sink, Checkpoint | PartWriter) and self.folder is None
        if joined and self.slicer is not None and not self.job.spec.resumable:
            self.slicer.place()  # parts kept at their input places (augment's): in order
        if joined:
            assert sink is not None and not isinstance(sink, TableWriter)
            sink.commit(self.read if self.job.spec.resumable else self.rows, empty, metadata)
        elif isinstance(sink, TableWriter):
            sink.commit(metadata)
        elif self.folder is not None:
            assert self.job.output is not None
            put_in_place(self.folder, self.job.output)
        if isinstance(sink, Checkpoint):
            sink.remove()
        self._committed = True

    def kept(self) -> tuple[int | None, Path | None]:
        """What a stopped run keeps: the rows on disk (not a count kept in memory: a stop may
        come between a part written and counted), and where; nothing but a checkpoint."""
        if isinstance(self.sink, Checkpoint) and self.job.spec.resumable:
            return self.sink.rows_kept(), self.sink.folder
        return None, None

    def drop_if_empty(self) -> None:
        """A checkpoint that holds no row (nothing worth resuming) is removed."""
        sink = self.sink
        if isinstance(sink, Checkpoint) and sink.rows_kept() == self.resumed.rows == 0:
            sink.remove()

    def close(self) -> None:
        """Clear the bar; close the readers now (pyarrow's read-ahead threads), not at
        interpreter exit; leave nothing of an output that was not committed."""
        if self.bar is not None:
            self.bar.close()
        for iterator in self._open:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
        if self._spool is not None:
            self._spool.close()
        if isinstance(self.sink, PartWriter | TableWriter):
            self.sink.close()
        elif isinstance(self.sink, Checkpoint) and not self.job.spec.resumable:
            self.sink.remove()  # whole output or none: nothing to resume from


@contextmanager
def running(
    job: Job,
    schema: pa.Schema | None = None,
    *,
    identity: Callable[[], dict[str, Any]] | None = None,
    group_rows: int = 1,
    total: int | None = None,
    unit: str = "rows",
    bar: bool = True,
) -> Iterator[Run]:
    """Run the block as `job` (see the module's docstring). `schema`: the output's (a part's
    or a table's); `identity()`: what a checkpoint belongs to (default: the inputs and the
    version, `Job.identity`); `group_rows`: a `tables` sink's row groups; `total` and `unit`:
    the bar's, when it does not count the inputs' rows; `bar=False`: none (a job that says its
    progress otherwise)."""
    pool = job.executor
    run = Run(job, schema, total, unit, bar)
    with ExitStack() as stack:
        if job.output is not None:  # no other run writes it (and its checkpoint) meanwhile
            stack.enter_context(OutputLock(job.output))
        checkpoint = None
        if job.target is not None and schema is not None:  # before any work
            check_text_columns(schema, job.format)
        on_slices = sliced(job)  # augment too: its parts kept by the workers, then joined
        said = on_the_client(job)  # else the client reads and writes: said, as it costs
        if said is not None and job.progress:
            print(f"note: {said}", file=sys.stderr)
        dataset = job.target is not None and job.target.dataset  # `-o DIR/`
        if dataset and job.spec.sink == "parts" and not on_slices:  # no checkpoint to hold parts
            raise InputError(
                f"{job.target}/: {job.spec.name} writes a Parquet dataset folder (-o DIR/) "
                "only with --executor dask from input files; give -o FILE.parquet here"
            )
        if (job.spec.sink == "checkpoint" or on_slices) and job.output is not None:
            checkpoint = Checkpoint(  # refuses a folder not its own
                job.output,
                job.format,
                job.spec.counted,
                record=job.spec.sink == "checkpoint",
                resumable=job.spec.resumable,
            )
            checkpoint.dataset = dataset
            if on_slices:
                run.slicer = SlicedRun(job, checkpoint)
        try:
            with sigterm_as_interrupt():  # restored before the clean-up below
                job.start_executor()
                if job.spec.sink == "folder":
                    assert job.output is not None
                    run.folder = stack.enter_context(folder_in_making(job.output))
                run.open(checkpoint, identity or (lambda: job.identity({})), group_rows)
                yield run
        except ExecutorLost as e:
            pool.terminate()
            raise RunFailed(str(e), *run.kept()) from None
        except KeyboardInterrupt:
            pool.terminate()
            raise RunInterrupted(*run.kept()) from None
        except InputError:  # the input failed part-way (a truncated .gz, say)
            pool.terminate()
            run.drop_if_empty()
            raise
        except BaseException:
            pool.terminate()
            raise
        finally:
            run.close()
