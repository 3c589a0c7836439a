"""The solve job: `solve_file` (files in, one result file out; `job`), `solve_batch` (puzzles
held in memory; `frame`), both on `batch.solve_record_batch`, one batch through parse, solve
and the result table."""
