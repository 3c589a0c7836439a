"""The run layer: the one skeleton every job runs on (solve, validate, generate, bench, score,
split, augment, enumerate), so that a job supplies only its unit of work, its output's schema
and its sink, named in the job table (`pipeline.jobs.JOBS`).

* `job`: what a job does first (`start_job`: options, inputs, output checked, executor chosen)
  and what it asks of the set-up (the clock, the run's metadata, a checkpoint's identity);
* `loop`: the run itself (`running`: the output's lock, SIGTERM as Ctrl-C, the workers
  started and stopped, the progress bar, the sink opened and committed, every way a run ends);
* `parts`: a task (a batch on its way to a worker) and a part (its results, encoded there);
* `checkpoint`: parts kept beside the output, so that `--resume` goes on where a run
  stopped, then joined into the output;
* `executors` (threads or worker processes here, `worker_process`) and `dask_executor` (a
  Dask cluster): one interface that maps a function over tasks, results in input order;
* `warmup`: the kernels, by name, loaded (or compiled) as the workers start;
* `pool`: `workers=` for the in-memory API (chunks on worker threads).
"""
