"""Validation: what is wrong with a puzzle corpus, row by row and as a whole.

* `catalogue`: every finding code, its level and message, and the findings table;
* `checks`: the row checks a worker runs on a batch;
* `duplicates`: exact duplicates over a whole file, in bounded memory;
* `minimal`: which givens of a unique puzzle could go;
* `job`: the validate job over a file (`validate_file`) and its in-memory twin
  (`validate_puzzles`).
"""

from pipeline.validate.job import ValidationSummary, validate_file, validate_puzzles

__all__ = ["ValidationSummary", "validate_file", "validate_puzzles"]
