"""A split of puzzles a notebook already holds: `split`, the in-memory twin of `split_file`.

splits = split(frame, fractions=(0.8, 0.1, 0.1), seed=1)
splits["train"]           # a polars DataFrame: puzzle, solution, clues, ..., group
splits.manifest.left_out  # {'malformed': 0, 'clash': 2, ..., 'duplicate': 5}
"""

from collections import Counter
from collections.abc import Sequence

import polars as pl
import pyarrow as pa

from pipeline.errors import InputError
from pipeline.io.columns import passthrough_names
from pipeline.io.frames import PuzzleInput, frame_columns, puzzle_batch
from pipeline.jobs.split.batch import SplitPart, added_columns, solve_options, split_record_batch
from pipeline.jobs.split.manifest import SplitManifest
from pipeline.jobs.split.options import RATING, SplitOptions
from pipeline.jobs.split.plan import plan_split
from pipeline.run.pool import map_chunks


class Splits(dict[str, pl.DataFrame]):
    """The splits by name, in the order asked (a dict of DataFrames), and their `manifest`."""

    manifest: SplitManifest


def split(
    puzzles: PuzzleInput | pl.LazyFrame,
    fractions: str | Sequence[float] = (0.8, 0.1, 0.1),
    names: str | Sequence[str] | None = None,
    seed: int = 0,
    stratify: str | None = None,
    *,
    column: str | None = None,
    solution_column: str | None = None,
    id_column: str | None = None,
    max_nodes: int | None = None,
    subsample: int | None = None,
    min_rating: float | None = None,
    workers: int | None = None,
) -> Splits:
    """Split puzzles into leak-free parts, as the `split` command does a file: each puzzle
    solved (those without exactly one solution left out), exact repeats kept once, puzzles
    grouped by canonical form and each group sent whole to one split, `fractions` of the groups
    to the splits `names` (default train,test or train,val,test), within each stratum of
    `stratify` (`difficulty`, `grade`, `clues` or `rating`, the input's column) when given,
    rows shuffled by `seed`; rows rated below `min_rating` left out first; the first split
    cut to `subsample` rows of its shuffled order (as `split_file` does).

    `puzzles`: what `solve_batch` takes (a DataFrame's puzzle, solution and id columns found
    by name or content, or named; its other columns kept; a LazyFrame is collected first).
    Returns a dict of DataFrames (columns: [id], puzzle, solution, [difficulty, grade,
    grade_level, steps, steps_by_level], clues, row, the other columns, group) with a
    `manifest` attribute (a `SplitManifest`). ValueError (`InputError` for the puzzles) for a
    bad argument.
    """
    options = SplitOptions.parse(
        fractions, names, seed, stratify, subsample=subsample, min_rating=min_rating
    )
    search = solve_options(options.rate, max_nodes)
    if isinstance(puzzles, pl.LazyFrame):  # a split needs every row at once
        puzzles = puzzles.collect()
    if isinstance(puzzles, pa.Table):
        puzzles = pl.DataFrame(puzzles)
    if isinstance(puzzles, pl.DataFrame):
        named = frame_columns(puzzles, column, solution_column, id_column)
        batch = puzzle_batch(puzzles, **named)
        used = [name for name in named.values() if name is not None]
        others = passthrough_names(puzzles.columns, used, reserved=added_columns(options.rate))
        for old, new in others.items():
            array = puzzles[old].to_arrow(compat_level=pl.CompatLevel.oldest())
            batch = batch.append_column(new, array)
    else:
        batch = puzzle_batch(
            puzzles, column=column, solution_column=solution_column, id_column=id_column
        )
    if options.needs_rating and RATING not in batch.schema.names:
        raise InputError(
            f"{'stratify' if options.stratify == RATING else 'min_rating'} needs "
            f"a column named {RATING}"
        )
    parts: list[SplitPart] = map_chunks(
        split_record_batch, batch, workers, search, None, min_rating
    )
    left_out: Counter = Counter()
    for part in parts:
        left_out.update(part.left_out)
    wrong = sum(p.wrong_solutions for p in parts) if "solution" in batch.schema.names else None
    kept = pl.from_arrow(pa.concat_tables([p.table for p in parts]))
    assert isinstance(kept, pl.DataFrame)
    plan = plan_split(kept, options, left_out)
    result = Splits(plan.frames)
    result.manifest = SplitManifest.of(
        plan, options, batch.num_rows, {"max_nodes": max_nodes}, wrong_input_solutions=wrong
    )
    return result
