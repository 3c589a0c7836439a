"""Solvers from outside (`--solver`) in `bench`: their options, and their answers checked after
the clock.

On the clock a solver from outside does what tdoku's `run_benchmark` times: one call per
puzzle, counting to the limit, with our reading, clash check and result table around it. A
solver that writes no grid while counting (tdoku, with limit 2) is asked for its grid again
after the clock, and every answer is then checked as `solve` checks it (`kernel_agrees`
included): the table's verdicts, figures and output come from that checked pass, its times
(`solve_ns`) from the timed one. So the rate is the solver's counting plus our overhead, never
our audit of it.
"""

from dataclasses import replace

import pyarrow as pa

from pipeline.errors import InputError
from pipeline.jobs.solve.batch import SolveOptions, solve_record_batch
from pipeline.kernels.registry import REGISTRY
from pipeline.plugins.open import open_solver, solver_metadata
from pipeline.run.executors import Executor


def solver_options(
    specs: tuple[str, ...], solutions: int, max_nodes: int | None
) -> dict[str, SolveOptions]:
    """Each spec's options on the clock (a strategy's name as `--strategy` would have it);
    ValueError for a bad spec."""
    options = {}
    for spec in specs:
        chosen = SolveOptions(solutions=solutions, solver=spec, agree=False, fetch=False)
        if chosen.solver is None:
            budget = max_nodes or REGISTRY[chosen.strategy].bench_budget
            chosen = SolveOptions(chosen.strategy, solutions, budget)
        options[spec] = chosen
    return options


def open_solvers(options: dict[str, SolveOptions]) -> list[dict]:
    """Open every solver from outside here before any work (`InputError`, one line, when one
    cannot be); what the metadata records of each."""
    about = []
    for chosen in options.values():
        if chosen.solver is not None:
            about.append(solver_metadata(open_solver(chosen.solver)))
    if not options:
        raise InputError("nothing to measure: give a strategy or a solver")
    return about


def checked(
    batches: list[pa.RecordBatch], timed: list[pa.Table], options: SolveOptions, pool: Executor
) -> list[pa.Table]:
    """The timed tables of a solver from outside, checked: the batches answered again, grids
    fetched and compared with our kernel, with the timed run's `solve_ns`."""
    if options.solver is None:
        return timed
    again = replace(options, agree=True, fetch=True)
    out = []
    for table, clock in zip(
        pool.map_ordered(solve_record_batch, batches, again), timed, strict=True
    ):
        at = table.schema.get_field_index("solve_ns")
        out.append(table.set_column(at, table.schema.field(at), clock.column("solve_ns")))
    return out
