"""Jobs: the work that runs over whole files, batch by batch, on one or many processes.

* `batch`: one batch through the middle of the pipeline (parse, solve, result table);
  `results` its table, in the result schema;
* `executors` (in this process, or local worker processes) and `dask_executor` (a Dask
  cluster): one interface that maps a function over batches, in input order;
* `setup`: what every file job does first (options, input, output, executor, progress);
* `checkpoint`: finished batches kept on disk, so that `--resume` goes on where a run stopped;
* the jobs themselves: `solve`, `generate`, `bench`.
"""
