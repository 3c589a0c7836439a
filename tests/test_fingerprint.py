"""The outputs of solve, validate, score, split and augment on `data/sample.csv`, pinned.

Each job is run on the shipped sample (with `data/bad_rows.csv` after it, and exact and
transposed repeats of some of its rows, so that every verdict, finding and reason to leave a
row out is met) through its Python twin, with one worker and with two
(and another batch size); its files and its summary are reduced to a fingerprint: the rows in
order with every column's values (timing columns such as `solve_ns` left out), the schema's
names and types, and the summary's fields that say what was done (not how fast, where, or
when). Both runs must give the same fingerprint, and it must equal the one pinned here.

What it guards: a change meant to move code around (issue 33's new layout) must not change
what any job writes. When a change is meant to change an output, the failure prints the new
fingerprint: pin it in the same commit and say why in its message.
"""

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "sample.csv"
BAD_ROWS = DATA / "bad_rows.csv"

# columns and summary fields that measure time, place or machine, never what was computed
TIMING_COLUMNS = {"solve_ns"}
VOLATILE_FIELDS = {
    "wall_s", "rows_per_s", "workers", "executor", "metadata", "input", "output", "inputs",
    "created_at", "version", "sha256",
}  # fmt: skip

PINNED = {
    "solve": "18920dd41fd11ea7",  # issue 34: max_nodes in the summary; issue 37: light search nodes
    "validate": "eb1513d6025a1d10",
    "score": "1f25bb82ab811da8",  # issue 34: --json's accuracies rounded to 1e-6
    "split": "ae549421ab552275",
    "augment": "b07dffe46af53aa4",
}


def _type_name(kind: pa.DataType) -> str:
    """A column's type, the same whichever string or binary layout the writer chose."""
    name = str(kind)
    for wide, plain in (("large_string", "string"), ("string_view", "string"),
                        ("large_binary", "binary"), ("binary_view", "binary"),
                        ("large_list", "list")):  # fmt: skip
        name = name.replace(wide, plain)
    return name


def _table(path: Path) -> dict[str, Any]:
    """A Parquet file's schema and rows, timing columns left out (its metadata, which holds
    times and versions, is not read)."""
    table = pq.read_table(path)
    table = table.drop_columns([c for c in table.column_names if c in TIMING_COLUMNS])
    return {
        "schema": [(f.name, _type_name(f.type)) for f in table.schema],
        "rows": table.to_pylist(),
    }


def _summary(summary: Any) -> dict[str, Any]:
    """What a job's summary (or the JSON it wrote) says was done, not how fast or where."""
    if not isinstance(summary, dict):
        summary = json.loads(summary.to_json()) if hasattr(summary, "to_json") else vars(summary)
    return {k: v for k, v in summary.items() if k not in VOLATILE_FIELDS}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _transposed(text: str | None) -> str | None:
    if text is None or len(text) != 81:
        return text
    return "".join(text[9 * c + r] for r in range(9) for c in range(9))


def _corpus(folder: Path) -> Path:
    """The sample, then the bad rows, then exact repeats of 30 sample rows and transposed
    copies of 30 others. Every id is text (the sample's with an `s` before them), as the bad
    rows' are."""
    import polars as pl

    sample = pl.read_csv(SAMPLE, infer_schema=False).with_columns(id=pl.format("s{}", "id"))
    bad = pl.read_csv(BAD_ROWS, infer_schema=False).drop("note")
    repeats = sample[100:3000:97].with_columns(id=pl.format("r{}", "id"))
    turned = sample[50:3000:97].with_columns(
        id=pl.format("t{}", "id"),
        puzzle=pl.col("puzzle").map_elements(_transposed, return_dtype=pl.String),
        solution=pl.col("solution").map_elements(_transposed, return_dtype=pl.String),
    )
    path = folder / "corpus.csv"
    pl.concat([sample, bad, repeats, turned]).write_csv(path)
    return path


def _predictions(folder: Path) -> Path:
    """The corpus's solutions as a model's answers, one in five spoiled in a fixed way (a
    digit changed, a cell left blank, a line cut short): every verdict of `score` is met."""
    import polars as pl

    frame = pl.read_csv(_corpus(folder), infer_schema=False)
    answers = []
    for i, answer in enumerate(frame["solution"].fill_null("")):
        if i % 5 == 1 and len(answer) == 81 and answer[40].isdigit():
            answer = answer[:40] + str(int(answer[40]) % 9 + 1) + answer[41:]
        elif i % 5 == 2:
            answer = answer[:10] + "." + answer[11:]
        elif i % 5 == 3:
            answer = answer[:80]
        answers.append(answer)
    path = folder / "predictions.csv"
    frame.select("id", "puzzle").with_columns(prediction=pl.Series(answers)).write_csv(path)
    return path


def _solve(folder: Path, **run: Any) -> Any:
    out = folder / "solved.parquet"
    summary = pipeline.solve_file(_corpus(folder), out, **run)
    return {"file": _table(out), "summary": _summary(summary)}


def _validate(folder: Path, **run: Any) -> Any:
    out = folder / "findings.parquet"
    summary = pipeline.validate_file(_corpus(folder), out, minimal=True, symmetry=True, **run)
    return {"file": _table(out), "summary": _summary(summary)}


def _score(folder: Path, **run: Any) -> Any:
    out = folder / "scored.parquet"
    summary = pipeline.score_file(_predictions(folder), out, **run)
    return {"file": _table(out), "summary": _summary(summary)}


def _split(folder: Path, **run: Any) -> Any:
    out = folder / "splits"
    manifest = pipeline.split_file(_corpus(folder), out, fractions="0.8,0.1,0.1", seed=3, **run)
    files = {p.name: _table(p) for p in sorted(out.glob("*.parquet"))}
    written = json.loads((out / "manifest.json").read_text())
    return {"files": files, "manifest": _summary(manifest), "written": _summary(written)}


def _augment(folder: Path, **run: Any) -> Any:
    out = folder / "augmented.parquet"
    summary = pipeline.augment_file(
        _corpus(folder), out, copies=2, seed=5, keep_original=True, **run
    )
    return {"file": _table(out), "summary": _summary(summary)}


JOBS: dict[str, Callable[..., Any]] = {
    "solve": _solve,
    "validate": _validate,
    "score": _score,
    "split": _split,
    "augment": _augment,
}


@pytest.mark.parametrize("job", JOBS)
def test_a_job_writes_what_it_wrote_before(job: str, tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = JOBS[job](tmp_path / "one", workers=1, progress=False)
    two = JOBS[job](tmp_path / "two", workers=2, batch_size=700, progress=False)
    assert _digest(one) == _digest(two), f"{job}: the output depends on workers or batch size"
    assert _digest(one) == PINNED[job], (
        f"{job}'s output changed: its fingerprint is now {_digest(one)!r}. If the change is "
        "meant, pin it in PINNED with the commit that makes it, and say why."
    )
