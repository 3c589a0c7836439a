"""The run loop every file job shares: workers started, batches mapped in input order, the
progress bar moved, and every way a run can end said the same way.

    with running(job, kept=lambda: (rows_on_disk, folder)) as run:
        for part in run.map(solve_part, tasks, options):   # in input order; the bar follows
            sink.add(part)
        run.finish()                                        # workers done, the bar complete
        sink.commit(...)                                    # still under the same guards

Within the block Ctrl-C and SIGTERM are a `KeyboardInterrupt`. However the block ends early,
the workers are stopped at once and the readers closed; then:

* workers or a cluster that went away (`ExecutorLost`) -> `RunFailed`, saying what `kept()`
  reports was kept (rows done, and where) or that nothing was;
* Ctrl-C or SIGTERM -> `RunInterrupted`, the same way;
* anything else (an input that fails part-way: `InputError`) goes on as it is.

Each result of `fn` has a `rows` attribute: the rows of the batch it stands for.
"""

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.errors import ExecutorLost, RunFailed, RunInterrupted
from pipeline.run.job import HiddenBar, Job, sigterm_as_interrupt

if TYPE_CHECKING:
    from tqdm import tqdm

Kept = Callable[[], tuple[int | None, Path | None]]  # rows done and where they are kept


def nothing_kept() -> tuple[int | None, Path | None]:
    return None, None


class RunningJob:
    """A job running: its workers up, its progress bar shown."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.bar: tqdm | HiddenBar | None = None
        self._open: list[Iterator[Any]] = []

    def show_progress(self, initial: int = 0) -> "tqdm | HiddenBar":
        """The progress bar, from `initial` rows (done by an earlier run, say)."""
        if self.bar is None:
            self.bar = self.job.progress_bar(initial=initial)
        return self.bar

    def map(self, fn: Callable[..., Any], tasks: Iterable[Any], *args: Any) -> Iterator[Any]:
        """`fn(task, *args)` for each task on the job's workers, in the order of `tasks`; the
        bar moves on by each result's `rows` once the caller is done with it."""
        bar = self.show_progress()
        tasks = iter(tasks)
        results = self.job.executor.map_ordered(fn, tasks, *args)
        self._open += [results, tasks]
        for result in results:
            yield result
            self.job.advance(bar, result.rows)

    def finish(self) -> None:
        """Every batch is done: let the workers go, and complete the bar."""
        self.job.executor.close()
        self.job.finish_bar(self.show_progress())

    def close(self) -> None:
        """Clear the bar; close the readers now (pyarrow's read-ahead threads), not at
        interpreter exit."""
        if self.bar is not None:
            self.bar.close()
        for iterator in self._open:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()


@contextmanager
def running(job: Job, *, kept: Kept = nothing_kept) -> Iterator[RunningJob]:
    """Start `job`'s workers (they load the job's kernels) and run the block; see the module's
    docstring for how it ends."""
    pool = job.executor
    run = None
    try:
        with sigterm_as_interrupt():
            job.start_executor()
            run = RunningJob(job)
            yield run
    except ExecutorLost as e:
        pool.terminate()
        raise RunFailed(str(e), *kept()) from None
    except KeyboardInterrupt:
        pool.terminate()
        raise RunInterrupted(*kept()) from None
    except BaseException:
        pool.terminate()
        raise
    finally:
        if run is not None:
            run.close()
