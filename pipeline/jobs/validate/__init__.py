"""Validation: what is wrong with a puzzle corpus, row by row and as a whole.

* `catalogue`: every finding code, its level and message, and the findings table;
* `checks`: the row checks; `minimal`: which givens of a unique puzzle could go;
* `batch`: one batch through the checks, the unit of work a worker runs;
* `duplicates`: exact and symmetric duplicates over a whole file, in bounded memory;
* `summary`: counts and first examples, gathered batch by batch; `merge`: the findings file
  in row order, duplicates put in place;
* `job`: the validate job over a file (`validate_file`); `frame`: its twin for puzzles in
  memory (`validate_puzzles`).
"""

from pipeline.jobs.validate.frame import validate_puzzles
from pipeline.jobs.validate.job import validate_file
from pipeline.jobs.validate.summary import ValidationSummary

__all__ = ["ValidationSummary", "validate_file", "validate_puzzles"]
