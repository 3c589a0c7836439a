"""The enumerate job: every solution of each puzzle, one row each (`enumerate_file`), and its
in-memory twin (`enumerate_puzzles`)."""

from pipeline.jobs.enumerate.frame import enumerate_puzzles
from pipeline.jobs.enumerate.job import EnumerateSummary, enumerate_file
from pipeline.jobs.enumerate.solutions import COLUMNS, OUTCOMES

__all__ = ["COLUMNS", "OUTCOMES", "EnumerateSummary", "enumerate_file", "enumerate_puzzles"]
