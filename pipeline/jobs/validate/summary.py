"""What a validation found, gathered batch by batch: counts per code and level, the first
examples, the clue counts (`FindingsTally`); the `ValidationSummary` the command prints.
"""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.grid import CELLS
from pipeline.jobs.validate.catalogue import CODES, LEVELS, code_counts, level_counts
from pipeline.jobs.validate.checks import duplicate_findings
from pipeline.jobs.validate.duplicates import Repeats
from pipeline.results.json_numbers import summary_json

EXAMPLES = 3  # first findings of each code kept for the summary


@dataclass
class ValidationSummary:
    """What a validation found; `to_json()`: the same as one JSON object."""

    input: str
    output: str
    rows: int
    clean: bool  # no error-level finding
    findings: dict[str, int]  # per code, every code
    levels: dict[str, int]  # per level
    rows_with_errors: int
    clues: dict[int, int]  # puzzles (rows that parse) by number of givens
    examples: dict[str, list[dict[str, Any]]]  # the first findings of each code found
    wall_s: float
    rows_per_s: float
    workers: int
    minimal: bool
    # the leak audit (`against=`): each TRAIN input (rows, malformed rows with examples,
    # pencilmark rows skipped), the leaks (exact, in disguise), the input's pencilmark rows
    # skipped; None without one
    against: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def to_json(self) -> str:
        return summary_json(self)

    def describe(self) -> str:
        """The terminal summary: counts per finding with a first example, the clue range."""
        verdict = "clean" if self.clean else f"{self.rows_with_errors:,} rows with errors"
        if not self.rows:  # no row is no evidence of clean data
            verdict = "nothing to validate (no rows)"
        lines = [
            f"{self.rows:,} rows in {self.wall_s:.2f} s ({self.rows_per_s:,.0f} rows/s, "
            f"{self.workers} worker{'s' if self.workers != 1 else ''}): "
            + verdict
            + "; findings: "
            + (", ".join(f"{n:,} {level}" for level, n in self.levels.items() if n) or "none")
        ]
        for code, n in self.findings.items():
            if n:
                first = self.examples[code][0]
                lines.append(
                    f"  {CODES[code]:<8} {code:<15} {n:>9,}  "
                    f"e.g. row {first['row']}: {first['message']}"
                )
        if self.against is not None:
            lines += _audit_lines(self.against)
        if self.clues:
            counts = np.repeat(list(self.clues), list(self.clues.values()))
            lines.append(
                f"clues: {counts.min()} to {counts.max()}, median {np.median(counts):g} "
                f"({len(counts):,} puzzles)"
            )
        lines.append(f"wrote {self.output}")
        return "\n".join(lines)


def _audit_lines(audit: dict[str, Any]) -> list[str]:
    """The leak audit in the terminal summary: the leaks, then what each TRAIN input held."""
    names = ", ".join(t["input"] for t in audit["train"])
    lines = [
        f"leaks: {audit['leaks']:,} rows are puzzles of {names} ({audit['exact']:,} "
        f"exactly, {audit['in_disguise']:,} in disguise)"
    ]
    for train in audit["train"]:
        skipped = []
        if train["malformed"]:
            first = train["examples"][0]
            skipped.append(
                f"{train['malformed']:,} malformed, not compared (e.g. row "
                f"{first['row']}: {first['message']})"
            )
        if train["pencilmarks"]:
            skipped.append(f"{train['pencilmarks']:,} pencilmark rows skipped")
        lines.append(
            f"  against {train['input']}: {train['rows']:,} rows"
            + (f"; {'; '.join(skipped)}" if skipped else "")
        )
    if audit["pencilmarks_skipped"]:
        lines.append(
            f"note: {audit['pencilmarks_skipped']:,} pencilmark rows of the input not "
            "checked for leaks (a pencilmark puzzle has no canonical form here)"
        )
    return lines


class FindingsTally:
    """Counts, first examples, clue counts: the summary, gathered batch by batch."""

    def __init__(self, keep_error_rows: bool = False) -> None:
        self.codes = dict.fromkeys(CODES, 0)
        self.levels = dict.fromkeys(LEVELS, 0)
        self.rows_with_errors = 0
        # the rows with errors, kept (8 bytes each) when errors found at the end (leaks) must
        # not count a row twice
        self._error_rows: list[np.ndarray] | None = [] if keep_error_rows else None
        self.clues = np.zeros(CELLS + 1, dtype=np.int64)
        self.examples: dict[str, list[dict[str, Any]]] = {}

    def add(self, findings: pa.Table, clues: np.ndarray | None = None) -> None:
        if clues is not None:
            self.clues += clues
        if not findings.num_rows:
            return
        for code, n in code_counts(findings).items():
            self.codes[code] += n
        for level, n in level_counts(findings).items():
            self.levels[level] += n
        is_error = findings.column("level").combine_chunks().indices.to_numpy() == 0
        error_rows = np.unique(findings.column("row").to_numpy()[is_error])
        self.rows_with_errors += len(error_rows)
        if self._error_rows is not None:
            self._error_rows.append(error_rows)
        self._examples(findings)

    def _examples(self, findings: pa.Table) -> None:
        wanted = [
            c
            for c, n in code_counts(findings).items()
            if n and len(self.examples.get(c, [])) < EXAMPLES
        ]
        if wanted:
            keep = ["row", "id", "message"] if "id" in findings.column_names else ["row", "message"]
            for record in findings.select([*keep, "code"]).to_pylist():
                examples = self.examples.setdefault(str(record.pop("code")), [])
                if len(examples) < EXAMPLES:
                    examples.append(record)

    def merge(self, other: "FindingsTally") -> None:
        """Add what `other` gathered of later rows (a slice's, on a worker: `sharded`)."""
        for code, n in other.codes.items():
            self.codes[code] += n
        for level, n in other.levels.items():
            self.levels[level] += n
        self.rows_with_errors += other.rows_with_errors
        self.clues += other.clues
        for code, examples in other.examples.items():
            mine = self.examples.setdefault(code, [])
            mine.extend(examples[: EXAMPLES - len(mine)])

    def add_repeats(self, repeats: Repeats) -> None:
        """The repeats' counts, and their first examples (without ids: those come with the
        findings file, read again from the input)."""
        for code, rows, first in repeats.kinds():
            if len(rows):
                self.add(duplicate_findings(rows[:EXAMPLES], first[:EXAMPLES], code=code))
                self.codes[code] += len(rows) - min(EXAMPLES, len(rows))
                self.levels[CODES[code]] += len(rows) - min(EXAMPLES, len(rows))

    def add_late(
        self, code: str, rows: np.ndarray, examples: pa.Table, earlier: np.ndarray | None = None
    ) -> None:
        """Findings of `code` for `rows` (distinct), found over the whole input at the end
        (leaks), with the first of them (`examples`); after every `add`. `earlier`: the rows
        with errors already counted, when this tally did not keep them (a slice's, on Dask)."""
        if not len(rows):
            return
        self.codes[code] += len(rows)
        self.levels[CODES[code]] += len(rows)
        self._examples(examples)
        if CODES[code] == "error":
            if earlier is None:
                earlier = np.concatenate(self._error_rows or [np.zeros(0, np.int64)])
            self.rows_with_errors += len(np.setdiff1d(rows, earlier))

    def summary(self, **run: Any) -> ValidationSummary:
        order = {code: i for i, code in enumerate(CODES)}
        return ValidationSummary(
            **run,
            clean=self.levels["error"] == 0,
            findings=self.codes,
            levels=self.levels,
            rows_with_errors=self.rows_with_errors,
            clues={c: int(n) for c, n in enumerate(self.clues.tolist()) if n},
            examples=dict(sorted(self.examples.items(), key=lambda item: order[item[0]])),
        )
