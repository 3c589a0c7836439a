"""The largest values some options take: beyond them a run asks for more than it can hold (or
finish), so the value is refused in one line before any work, rather than failing deep in a
job (an array too large to allocate, threads that cannot start).

* `MAX_WORKERS`: worker threads or processes of one run (`--workers`, `workers=`): each holds a
  batch in flight; past a thousand the machine runs out of threads before the run does.
* `MAX_COPIES`: random symmetric copies of a puzzle (`augment --copies`, `split --augment`):
  the copies of a batch are drawn and held at once, and each must differ from the others
  (~0.5 s a puzzle at 10,000; HRM's largest recipe asks 1,000).
* `MAX_RATE_SAMPLES`: symmetries averaged by `--rate` (`--rate-samples`; default 16): the time
  of rating grows with them (~20 ms a puzzle at 10,000).
"""

MAX_WORKERS = 1024
MAX_COPIES = 10_000
MAX_RATE_SAMPLES = 10_000

__all__ = ["MAX_COPIES", "MAX_RATE_SAMPLES", "MAX_WORKERS"]
