"""Scoring: a model's answers (a prediction column beside the puzzles) judged by the rules.

* `verdicts`: each prediction's verdict, message and cells correct, over whole batches;
* `batch`: one batch scored, the unit of work a worker runs, and the output's schema;
* `summary`: accuracy, cell accuracy, by verdict, clue count and grade, gathered batch by batch;
* `job`: the score job over a file (`score_file`); `frame`: its twin for frames and columns
  in memory (`score_predictions`).
"""

from pipeline.jobs.score.frame import score_predictions
from pipeline.jobs.score.job import score_file
from pipeline.jobs.score.summary import ScoreSummary

__all__ = ["ScoreSummary", "score_file", "score_predictions"]
