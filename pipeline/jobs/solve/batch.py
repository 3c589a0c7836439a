"""One batch through the middle of the pipeline: parse, solve, assemble the result table.

`solve_record_batch` is the unit of work that the solve job hands to its executor's workers
(`frame.solve_batch` is the same step for puzzles a notebook already holds). polars is not
imported here: solving a file to Parquet does without it.
"""

from dataclasses import dataclass

import pyarrow as pa

from pipeline.grid import ParsedGrids, format_grids, parse_puzzles
from pipeline.io.dataset import optional_column
from pipeline.kernels import (
    DEFAULT_STRATEGY,
    MAX_NODES,
    KernelResults,
    codes,
    get_strategy,
    solve_grids,
)
from pipeline.kernels.registry import node_budget
from pipeline.limits import MAX_RATE_SAMPLES
from pipeline.plugins import parse_spec
from pipeline.results.schema import COLUMNS, build_results, enum_array, enum_field, result_schema


@dataclass(frozen=True)
class SolveOptions:
    """How to search: strategy, how many solutions to look for (2 proves uniqueness; more
    counts them, into `solution_count`), budget."""

    strategy: str = DEFAULT_STRATEGY
    solutions: int = 2
    max_nodes: int | None = None  # as given; None: the strategy's own (`budget`)
    canonical: bool = False  # add the `canonical` column (minlex form)
    rate: bool = False  # add `difficulty`, `grade`, `steps`, `steps_by_level`
    rate_samples: int = 16  # symmetries averaged by `difficulty`
    rate_seed: int = 0
    solver: str | None = None  # a `--solver` spec; a built-in one is the same as `strategy`
    agree: bool = True  # compare a solver's claims with our kernel (`kernel_agrees`)
    fetch: bool = True  # ask again for a grid the solver did not write while counting

    def __post_init__(self) -> None:
        if self.solver is not None:
            spec = parse_spec(self.solver)  # ValueError naming the choices
            if spec.builtin:
                object.__setattr__(self, "strategy", spec.target)
                object.__setattr__(self, "solver", None)
        get_strategy(self.strategy)  # ValueError naming the choices
        if isinstance(self.solutions, bool) or not isinstance(self.solutions, int):
            raise ValueError(f"solutions must be a whole number, not {self.solutions!r}")
        if self.solutions < 1:
            raise ValueError(f"solutions must be at least 1, not {self.solutions!r}")
        if self.solver is not None and self.solutions > 2:
            raise ValueError(
                "a solver from outside is asked for 1 or 2 solutions; counting "
                "beyond 2 is the built-in strategies' (--solutions N)"
            )
        if self.max_nodes is not None and not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(
                f"max_nodes must be between 1 and {MAX_NODES:,}, not {self.max_nodes!r}"
            )
        if self.rate_samples < 0 or self.rate_seed < 0:
            raise ValueError("rate_samples and rate_seed must be at least 0")
        if self.rate_samples > MAX_RATE_SAMPLES:
            raise ValueError(
                f"rate_samples must be at most {MAX_RATE_SAMPLES:,}, not {self.rate_samples:,}"
            )
        if self.solutions > MAX_NODES:
            raise ValueError(
                f"solutions must be between 1 and {MAX_NODES:,}, not {self.solutions!r}"
            )

    @property
    def budget(self) -> int | None:
        """Each puzzle's node budget: `max_nodes` when given, else the strategy's default
        (`registry.node_budget`: one rule for every command); None for a solver from outside,
        whose searches are its own."""
        return None if self.solver is not None else node_budget(self.strategy, self.max_nodes)

    @property
    def name(self) -> str:
        """What results and reports call the solver: the strategy, or the `--solver` spec."""
        return self.solver or self.strategy

    @property
    def counts(self) -> bool:
        """Whether results count the solutions (`solution_count`): beyond 2, "one" and
        "several" no longer say all that was found."""
        return self.solutions > 2

    def kernels(self) -> tuple[str, ...]:
        """The kernels a batch of these options calls (`run.warmup.KERNELS`): the strategy's
        (`fast` for a solver from outside: the one its answers are compared with), the clash
        check, and those of the columns asked for."""
        library = ("library",) if self.solver and self.solver.startswith("c:") else ()
        return (
            self.strategy,
            "clash",
            *library,
            *(("canonical",) if self.canonical else ()),
            *(("rating",) if self.rate else ()),
        )

    def added_schema(self) -> pa.Schema:
        """The columns these options add to the result schema (after its own)."""
        fields = [pa.field("kernel_agrees", pa.bool_())] if self.solver else []
        fields += [pa.field("solution_count", pa.int64())] if self.counts else []
        fields += [pa.field("canonical", pa.string())] if self.canonical else []
        if self.rate:
            import polars as pl

            from pipeline.rating import RATING_SCHEMA

            empty = pl.DataFrame(schema=RATING_SCHEMA)
            for field in empty.to_arrow(compat_level=pl.CompatLevel.oldest()).schema:
                fields += _grade_fields() if field.name == "grade" else [field]
        return pa.schema(fields)


def documented_schema() -> tuple[pa.Schema, dict[str, str]]:
    """The result schema with every column an option adds (a solver's, then the others), and
    what each means (the docs' table)."""
    solver = SolveOptions(solver="c:lib.so:fn").added_schema()
    every = SolveOptions(solutions=3, canonical=True, rate=True)
    return result_schema(pa.string(), pa.unify_schemas([solver, every.added_schema()])), COLUMNS


def _grade_fields() -> list[pa.Field]:
    """`grade`, an Enum in ladder order for polars, and `grade_level`, its place on the ladder
    as a number, for tools that read the grade as text (`ORDER BY grade_level`)."""
    from pipeline.rating import GRADES

    return [enum_field("grade", GRADES), pa.field("grade_level", pa.int8())]


def _added(parsed: ParsedGrids, found: KernelResults, options: SolveOptions) -> dict:
    """The columns asked for beyond the result schema: the canonical form, the ratings."""
    columns: dict[str, pa.Array] = {}
    plain = parsed.ok if parsed.pencilmark is None else parsed.ok & ~parsed.pencilmark
    if options.counts:
        columns["solution_count"] = pa.array(found.counts, pa.int64(), mask=~parsed.ok)
    if options.canonical:  # of 81-cell puzzles: a pencilmark puzzle has no minlex form here
        from pipeline.canonical_forms import canonical_grids

        columns["canonical"] = format_grids(canonical_grids(parsed.grids), mask=plain)
    if options.rate:
        import polars as pl

        from pipeline.rating import rate_grids

        # with pencilmark rows, every row rated from its candidates (a plain row's from its
        # givens: the same rating as from its grid)
        skip = ~parsed.ok | (found.verdicts == codes.INVALID)
        rated = rate_grids(
            parsed.grids,
            skip,
            options.rate_samples,
            options.rate_seed,
            options.max_nodes,
            parsed.candidates,
        )
        table = rated.to_arrow(compat_level=pl.CompatLevel.oldest())
        for name in table.column_names:
            if name == "grade":  # the Enum's codes are the ladder's levels
                levels = rated["grade"].to_physical().cast(pl.Int8).to_arrow()
                grade, level = _grade_fields()
                columns |= {"grade": enum_array(levels, grade), level.name: levels}
            else:
                columns[name] = table.column(name).combine_chunks()
    return columns


_INPUT = ("row", "id", "puzzle", "solution")  # a batch's own columns; the others pass through


def solve_record_batch(batch: pa.RecordBatch, options: SolveOptions) -> pa.Table:
    """Solve a batch with columns `row`, `puzzle` and optionally `solution` and `id`; any
    other column passes through to the results (`Dataset.extra_schema`)."""
    puzzles = batch.column(batch.schema.get_field_index("puzzle"))
    said: dict[str, pa.Array] = {}
    messages = None
    if options.solver is None:
        parsed = parse_puzzles(puzzles, pencilmarks=True)
        marks = {} if parsed.candidates is None else {"candidates": parsed.candidates}
        found = solve_grids(
            parsed.grids,
            strategy=options.strategy,
            solutions=options.solutions,
            max_nodes=options.budget,
            skip=~parsed.ok,
            **marks,
        )
    else:
        from pipeline.plugins.batch import ask_solver  # numba and the adapter: in workers

        # a solver from outside reads 81 cells: a pencilmark row is malformed, saying why
        parsed = parse_puzzles(puzzles)
        found, messages, agrees = ask_solver(
            options.solver,
            parsed.grids,
            ~parsed.ok,
            options.solutions,
            options.agree,
            options.fetch,
        )
        said["kernel_agrees"] = pa.array(agrees == 1, mask=agrees < 0)
    passed = {n: batch.column(n) for n in batch.schema.names if n not in _INPUT}
    return build_results(
        batch.column(batch.schema.get_field_index("row")),
        puzzles,
        parsed,
        found,
        ids=optional_column(batch, "id"),
        expected=optional_column(batch, "solution"),
        extra=said | _added(parsed, found, options) | passed,
        extra_fields=options.added_schema() if options.rate or options.counts else (),
        messages=messages,
    )
