"""The runner: what the file jobs run on (solve, validate, score, split, augment, enumerate;
generate and bench take only some of its pieces so far).

* `job`: what a job does first (options, inputs, output, executor, progress bar, metadata);
* `executors` (threads or worker processes here) and `dask_executor` (a Dask cluster): one
  interface that maps a function over batches, results in input order;
* `parts`: a batch's results encoded in the output's format by the worker that made them;
* `checkpoint`: finished parts kept beside the output, so that `--resume` goes on where a run
  stopped, then joined into the output;
* `pool`: `workers=` for the in-memory API (chunks on worker threads).
"""
