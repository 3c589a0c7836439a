"""The report as data: runs, their figures, the corpora they form and the comparisons within
each corpus. The renderers (`text`, `html`) read it; `to_dict()` is the `--json` output."""

from dataclasses import dataclass
from typing import Any

from pipeline.errors import printable
from pipeline.report.compare import Corpus, Pair, group_corpora
from pipeline.report.runs import Run, run_figures
from pipeline.report.scores import ScoreReport
from pipeline.results.json_numbers import json_text


@dataclass
class Report:
    """The figures of one or more runs and their comparisons; text, JSON or HTML."""

    runs: list[Run]
    figures: list[dict[str, Any]]
    corpora: list[Corpus]
    scores: ScoreReport | None = None  # the score files' runs (`scores`), when there are any

    @classmethod
    def of(cls, runs: list[Run], scores: ScoreReport | None = None) -> "Report":
        """Every figure of `runs`, and the runs grouped by the puzzles they hold."""
        return cls(runs, [run_figures(r.frame) for r in runs], group_corpora(runs), scores)

    @property
    def pairs(self) -> list[Pair]:
        """(baseline, run) of every run after the first of its corpus, in run order."""
        order = {id(r): i for i, r in enumerate(self.runs)}
        pairs = [p for c in self.corpora for p in c.pairs]
        return sorted(pairs, key=lambda p: order[id(p.run)])

    @property
    def comparisons(self) -> list[dict[str, Any]]:
        """The figures of every pair, as in `to_dict()`."""
        return [p.figures for p in self.pairs]

    def corpus_of(self, run: Run) -> Corpus:
        return next(c for c in self.corpora if any(r is run for r in c.runs))

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [
                {
                    "label": r.label,
                    "path": printable(str(r.path)),
                    "corpus": self.corpus_of(r).name,
                    "strategy": r.strategy,
                    "metadata": r.meta,
                    "notes": r.notes,
                    **f,
                }
                for r, f in zip(self.runs, self.figures, strict=True)
            ],
            "corpora": [c.to_dict() for c in self.corpora],
            "comparisons": self.comparisons,
        } | ({"scores": self.scores.to_dict()} if self.scores is not None else {})

    def to_json(self) -> str:
        return json_text(self.to_dict())
