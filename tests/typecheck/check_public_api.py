"""The public API as a user's typed code calls it: `make lint` runs mypy on this file, which must
pass (it is type-checked, never run). Each name comes through `import pipeline`, as a user
writes it, so a name that mypy cannot see, or sees as `Any`, shows here."""

from typing import assert_type

import polars as pl

import pipeline

PUZZLE = "..3.2.6..9..3.5..1..18.64....81.29..7.......8..67.82....26.95..8..2.3..9..5.1.3.."

result = pipeline.solve(PUZZLE, strategy="mrv")
assert_type(result, pipeline.SolveResult)
assert_type(pipeline.is_valid(PUZZLE), bool)
assert_type(pipeline.solve_unique(PUZZLE), list[list[str]])
assert_type(pipeline.solve_sudoku([list(PUZZLE[i : i + 9]) for i in range(0, 81, 9)]), bool)

frame = pipeline.solve_batch([PUZZLE], workers=2)
assert_type(frame, pl.DataFrame)
assert_type(pipeline.solve_batch(frame.lazy(), column="puzzle"), pl.LazyFrame)
assert_type(pipeline.validate_puzzles([PUZZLE]), pl.DataFrame)
assert_type(pipeline.score_predictions([PUZZLE], [PUZZLE], rate=True), pl.DataFrame)
assert_type(pipeline.score_predictions(frame.lazy(), prediction_column="solution"), pl.LazyFrame)
assert_type(pipeline.generate(3, seed=1), pl.DataFrame)
assert_type(pipeline.canonical(frame, column="puzzle"), pl.DataFrame)
assert_type(pipeline.canonical([PUZZLE]), pl.Series)
assert_type(pipeline.generate_file(3, "corpus.parquet").rows, int)
assert_type(pipeline.rate(frame, samples=4), pl.DataFrame)
copies = pipeline.augment(frame, copies=4, seed=1, keep_original=True)
assert_type(copies, pl.DataFrame)
assert_type(pipeline.restore_originals(copies), pl.DataFrame)
assert_type(pipeline.augment_file("puzzles.csv", "out.parquet", copies=2).copies, int)
assert_type(pipeline.__version__, str)
splits = pipeline.split(frame, fractions=(0.8, 0.2), seed=1, stratify="clues")
assert_type(splits["train"], pl.DataFrame)
assert_type(splits.manifest, pipeline.SplitManifest)
assert_type(pipeline.split_file("puzzles.csv", "splits", fractions="0.8,0.2").rows_kept, int)
for chunk in pipeline.enumerate_puzzles([PUZZLE], limit=10, chunk_rows=5):
    assert_type(chunk, pl.DataFrame)
assert_type(pipeline.enumerate_file("family.txt", "all.parquet", limit=100).solutions, int)

try:
    pipeline.solve_file("puzzles.csv", "out.parquet", strategy="fast")
except pipeline.InputNotFoundError as missing:
    assert_type(missing, pipeline.InputNotFoundError)
except pipeline.InputError as bad:
    assert_type(bad, pipeline.InputError)
