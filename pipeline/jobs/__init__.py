"""The jobs, one package each, all of one shape: `solve`, `validate`, `generate`, `bench`,
`score`, `split`, `augment`, `enumerate`.

A job's package holds `batch.py` (the worker's unit: one batch of rows through the job's
kernels into an Arrow table), `job.py` (the file job, `<job>_file`, on the run loop of
`pipeline.run`) and `frame.py` (its DataFrame twin, for puzzles a notebook holds), where the job
has them, beside its own modules. The public names are re-exported by `pipeline`; no package
here is named after a public function of `pipeline` (these are `pipeline.jobs.solve`, never
`pipeline.solve`).
"""
