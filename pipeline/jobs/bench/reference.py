"""Reference figures beside `bench`'s own: puzzles/s per dataset read from a file (such as the
tdoku rates `benchmarks/tdoku_reference.csv` quotes), or tdoku's harness measured here, on the
same puzzles, when a build of it is named.

A reference file is CSV (`#` lines are its note) with columns `dataset` and `puzzles_per_s`
(and optionally `solver`), or JSON: `{"dataset": puzzles_per_s, ...}` or `{"label": ...,
"note": ..., "figures": {...}}`. A dataset is matched by the name `bench` gives it (the input
file's name without its suffixes, `puzzles3_magictour_top1465`) or by its file name.

tdoku's `run_benchmark` (github.com/t-dillon/tdoku, src/run_benchmark.cc) is run as
`run_benchmark -s tdoku -c1 -r0 -n<N> -t1 -w1 -e1 FILE`: CSV output, the puzzles as they are
(no random transformation), N = every puzzle of the file once, one second of warm-up and one
of timing (it loops over the set until the second is up), `-f` for `solutions=1`. FILE holds
the dataset's parseable puzzles (what `bench` solved, malformed rows aside) and an
`ALLOWZERO` comment, so that puzzles without a solution do not stop it. One core, whatever
`workers` is.
"""

import json
import os
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pipeline.errors import InputError, first_line

TDOKU_SECONDS = 1  # warm-up and timing of each tdoku run (run_benchmark takes whole seconds)
TDOKU_TIMEOUT = 120  # seconds before a tdoku run is given up (its loop stops after ~2 s)


@dataclass
class Reference:
    """One column of reference figures: puzzles/s by dataset name."""

    label: str  # the column's name: "tdoku (file)", "tdoku (measured)"
    source: str  # the file, or the tdoku binary
    note: str  # what the figures are, one sentence
    figures: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # measured: every run's figures

    def rate(self, dataset: str, path: str) -> float | None:
        """The figure for a dataset, by its name or its file's name; None without one."""
        for key in (dataset, Path(path).name):
            if key in self.figures:
                return self.figures[key]
        return None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _bad(path: Path, why: str) -> InputError:
    return InputError(f"{path}: not a reference file ({why})")


def read_reference(path: str | Path) -> Reference:
    """The figures of a reference file (CSV or JSON, see the module). Raises `InputError`
    (one line) for a file it cannot use."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such reference file")
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise _bad(path, f"JSON: {e}") from None
        raw = data.get("figures", data) if isinstance(data, dict) else None
        if not isinstance(raw, dict):
            raise _bad(path, "JSON: want an object of dataset -> puzzles/s")
        label = str(data.get("label") or path.stem)
        note = str(data.get("note") or "")
    else:
        try:
            frame = pl.read_csv(path, comment_prefix="#")
        except pl.exceptions.PolarsError as e:
            raise _bad(path, first_line(e)) from None
        if not {"dataset", "puzzles_per_s"} <= set(frame.columns):
            raise _bad(path, "want the columns dataset, puzzles_per_s")
        raw = dict(frame.select("dataset", "puzzles_per_s").rows())
        solvers = frame["solver"].unique().to_list() if "solver" in frame.columns else []
        label = str(solvers[0]) if len(solvers) == 1 else path.stem
        comments = [
            line.lstrip("# ").rstrip() for line in text.splitlines() if line.startswith("#")
        ]
        note = " ".join(c for c in comments if c)
    try:
        figures = {str(k): float(v) for k, v in raw.items()}
    except (TypeError, ValueError):
        raise _bad(path, "a puzzles/s figure is not a number") from None
    return Reference(f"{label} (file)", str(path), note, figures)


def tdoku_binary(path: str | Path | None) -> tuple[Path | None, str | None]:
    """The tdoku `run_benchmark` to measure with, or None and why it is skipped."""
    if path is None or str(path) == "":
        return None, None
    binary = Path(path)
    if not binary.is_file() or not os.access(binary, os.X_OK):
        return None, f"tdoku: {binary} is not an executable file: skipped"
    return binary, None


def write_tdoku_input(puzzles: list[str], path: Path, name: str) -> Path:
    """The puzzles as a file tdoku's harness reads: one a line, `ALLOWZERO` first."""
    lines = [f"# {name} (sudoku-pipeline bench)", "# ALLOWZERO", *puzzles]
    path.write_text("\n".join(lines) + "\n", encoding="ascii", errors="replace")
    return path


def run_tdoku(binary: Path, data: Path, puzzles: int, solutions: int) -> dict[str, Any]:
    """One run of tdoku's harness: `puzzles_per_s`, `us_per_puzzle`, `no_guess_pct`,
    `guesses_per_puzzle` and `build` (compiler and flags). Raises `RuntimeError` with one
    line when it fails."""
    timing = [f"-n{puzzles}", f"-t{TDOKU_SECONDS}", f"-w{TDOKU_SECONDS}", "-e1"]
    first = ["-f"] if solutions == 1 else []
    command = [str(binary), "-s", "tdoku", "-c1", "-r0", *timing, *first, str(data)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TDOKU_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RuntimeError(f"{type(e).__name__}: {first_line(e)}") from None
    for line in done.stdout.splitlines():
        fields = line.split(",")
        if len(fields) >= 9 and fields[-5] == "tdoku" and done.returncode == 0:
            try:
                rate, us, no_guess, guesses = (float(f) for f in fields[-4:])
            except ValueError:
                break
            build = " ".join(f.strip() for f in fields[:3])
            return {
                "puzzles_per_s": rate,
                "us_per_puzzle": us,
                "no_guess_pct": no_guess,
                "guesses_per_puzzle": guesses,
                "build": build,
            }
    said = (done.stdout + done.stderr).strip().splitlines()
    raise RuntimeError(f"exit code {done.returncode}: {said[0] if said else 'no output'}")


class TdokuRuns:
    """tdoku measured on each dataset, best of the runs made: the `Reference` column."""

    def __init__(self, binary: Path, solutions: int) -> None:
        self.binary, self.solutions = binary, solutions
        self.folder = Path(tempfile.mkdtemp(prefix="bench-tdoku-"))
        self.inputs: dict[str, tuple[Path, int]] = {}
        self.reference = Reference(
            "tdoku (measured)",
            str(binary),
            f"tdoku's run_benchmark here, one core, the same puzzles untransformed, "
            f"{'first solution' if solutions == 1 else 'counting up to 2 solutions'}, "
            f"{TDOKU_SECONDS} s per run, best of the runs",
        )
        self.notes: list[str] = []

    def measure(self, dataset: str, puzzles: list[str]) -> None:
        """One more run on `dataset`; a failure becomes a note (and no figure)."""
        if dataset not in self.inputs:
            path = self.folder / f"{len(self.inputs)}.txt"
            self.inputs[dataset] = (write_tdoku_input(puzzles, path, dataset), len(puzzles))
        data, n = self.inputs[dataset]
        runs = self.reference.details.setdefault(dataset, [])
        if not n or any(isinstance(r, str) for r in runs):
            return
        try:
            figures = run_tdoku(self.binary, data, n, self.solutions)
        except RuntimeError as e:
            runs.append(str(e))
            self.notes.append(f"tdoku failed on {dataset}: {e}")
            self.reference.figures.pop(dataset, None)
            return
        runs.append(figures)
        best = self.reference.figures.get(dataset, 0.0)
        self.reference.figures[dataset] = max(best, figures["puzzles_per_s"])

    def close(self) -> None:
        for path, _ in self.inputs.values():
            path.unlink(missing_ok=True)
        self.folder.rmdir()
