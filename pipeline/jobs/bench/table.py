"""The bench table: one row per dataset x strategy, and how it is shown (Markdown, as
tdoku's harness prints it, with a footer of what the figures are; JSON)."""

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from pipeline.jobs.bench.reference import Reference
from pipeline.results.json_numbers import json_text
from pipeline.results.measures import fixed


@dataclass
class BenchRow:
    """The figures of one dataset x strategy."""

    dataset: str
    strategy: str
    puzzles: int
    puzzles_per_s: float  # the best repeat's
    wall_s: float  # the best repeat's
    max_nodes: int | None
    path: str
    us_per_puzzle: float | None = None  # the figures of searched puzzles: None without any
    nodes_per_puzzle: float | None = None
    guesses_per_puzzle: float | None = None
    no_guess_pct: float | None = None
    limit: int = 0
    rates: list[float] = field(default_factory=list)  # puzzles/s of every repeat, in order
    references: dict[str, float | None] = field(default_factory=dict)  # label -> puzzles/s

    @property
    def median_per_s(self) -> float:
        return statistics.median(self.rates) if self.rates else self.puzzles_per_s

    @property
    def min_per_s(self) -> float:
        return min(self.rates) if self.rates else self.puzzles_per_s

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"median_per_s": self.median_per_s, "min_per_s": self.min_per_s}


def _num(value: float | None, places: int) -> str:
    return "-" if value is None else fixed(value, places)


@dataclass
class BenchResult:
    """Every row of the table; `to_markdown()` is what the `bench` command prints."""

    rows: list[BenchRow]
    workers: int
    output: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)
    references: list[Reference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # references skipped or failed

    def to_markdown(self) -> str:
        refs = [r.label for r in self.references]
        headers = [
            "dataset",
            "strategy",
            "puzzles",
            "puzzles/s",
            "median",
            "min",
            "us/puzzle",
            "nodes/puzzle",
            "guesses/puzzle",
            "% no guess",
            "limit",
        ]
        for label in refs:
            headers += [f"{label} puzzles/s", f"% of {label}"]
        lines = ["| " + " | ".join(headers) + " |", "|---|---|" + "---:|" * (len(headers) - 2)]
        for r in self.rows:
            cells = [
                r.dataset,
                r.strategy,
                f"{r.puzzles:,}",
                _num(r.puzzles_per_s, 0),
                _num(r.median_per_s, 0),
                _num(r.min_per_s, 0),
                _num(r.us_per_puzzle, 1),
                _num(r.nodes_per_puzzle, 1),
                _num(r.guesses_per_puzzle, 1),
                _num(r.no_guess_pct, 1),
                f"{r.limit:,}",
            ]
            for label in refs:
                ref = r.references.get(label)
                cells += [_num(ref, 0), _num(100 * r.puzzles_per_s / ref if ref else None, 0)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n\n" + "\n".join(self.footer()) + "\n"

    def footer(self) -> list[str]:
        """What the figures are, the machine, the versions and the options: one line each."""
        meta = self.metadata
        on = f"{self.workers} worker{'s' if self.workers > 1 else ''}"
        repeats = meta.get("repeats", 1)
        lines = [
            f"puzzles/s: rows over the wall time of solving ({on}, kernels loaded first), best "
            f"of {repeats} repeat{'s' if repeats != 1 else ''}; median and min: of the "
            "repeats; us, nodes and guesses per searched puzzle, of the fastest repeat; limit: "
            "puzzles left at the node budget.",
        ]
        cpu, versions = meta.get("cpu") or {}, meta.get("versions") or {}
        if cpu or versions:
            listed = ", ".join(f"{k.replace('_', '-')} {v}" for k, v in versions.items())
            used = f" ({cpu['instructions']})" if cpu.get("instructions") else ""
            lines.append(
                f"machine: {cpu.get('model', '?')}{used}, {cpu.get('count', '?')} cores; "
                f"{listed}; "
                f"started {meta.get('started_at', '?')}."
            )
        if meta.get("options"):
            shown = [
                f"{k} ({v})" if "; " in str(v) else f"{k} {v}" for k, v in meta["options"].items()
            ]
            lines.append("options: " + ", ".join(shown) + ".")
        if meta.get("solvers"):
            lines.append(
                "solvers from outside (--solver): on the clock one call a puzzle counting to the "
                "limit (us/puzzle: that call); their answers fetched where missing and checked, "
                "kernel_agrees included, after the clock; nodes/puzzle '-' where not counted."
            )
        for ref in self.references:
            lines.append(f"{ref.label}: {ref.note} ({ref.source}).".replace(" ()", ""))
        lines += [f"note: {n}." for n in self.notes]
        return lines

    def to_json(self) -> str:
        return json_text(
            {
                "workers": self.workers,
                "output": self.output,
                "metadata": {k: v for k, v in self.metadata.items() if k != "runs"},
                "references": [r.to_dict() for r in self.references],
                "notes": self.notes,
                "rows": [r.to_dict() for r in self.rows],
            }
        )
