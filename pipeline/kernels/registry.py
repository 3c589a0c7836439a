"""The strategies, in one table: what each is, where its kernel lives, what it can do.

Everything that lists strategies reads this table: the solver facade (`solve_grids`), the
command line's `--strategy` choices, `bench`'s default node budgets, the report's colours.
Kernels are imported on first use (each compiles, or loads from numba's cache, when first
called), so reading the table costs nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module


@dataclass(frozen=True)
class Strategy:
    """One way to search; its kernel follows the contract of `pipeline.kernels`."""

    name: str
    summary: str  # one line, for --help and the docs
    module: str  # where the kernel lives
    kernel: str  # the kernel's name there
    # leading arguments of the kernel before the contract's `max_solutions` (one kernel can
    # serve several strategies through a plain flag: flags keep numba's cache working)
    flags: tuple[bool, ...] = ()
    # node budget `bench` uses when none is given (the reference searches give up on the
    # hardest puzzles at 20,000 nodes instead of running for minutes)
    bench_budget: int | None = None
    # the kernel's twin for pencilmark puzzles (`(n, 81) uint16` candidates in place of the
    # grids), in the same module; None: the strategy takes grids only
    candidates_kernel: str | None = None

    def load(self, candidates: bool = False) -> Callable[..., None]:
        """The strategy's numba kernel (its twin for pencilmark puzzles with `candidates`)."""
        if candidates and self.candidates_kernel is None:
            raise ValueError(f"strategy {self.name!r} does not take candidates")
        name = self.candidates_kernel if candidates else self.kernel
        return getattr(import_module(self.module), str(name))

    def kernels(self) -> tuple[tuple[str, str], ...]:
        """(module, name) of the strategy's kernel, as `pipeline.compiled.expect` takes them."""
        return ((self.module, self.kernel),)


REGISTRY: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy(
            "fast",
            "propagation on a band-wise bitboard (locked candidates, hidden and naked "
            "singles, the triads rule), then binary branching on a digit's configuration in a "
            "band or stack",
            "pipeline.kernels.fast",
            "solve_kernel",
            candidates_kernel="solve_candidates_kernel",
        ),
        Strategy(
            "mrv",
            "backtracking on the empty cell with the fewest allowed digits, no propagation",
            "pipeline.kernels.reference",
            "reference_kernel",
            flags=(True,),
            candidates_kernel="reference_candidates_kernel",
            bench_budget=20_000,
        ),
        Strategy(
            "backtrack",
            "backtracking over the empty cells in row-major order, digits 1 to 9",
            "pipeline.kernels.reference",
            "reference_kernel",
            flags=(False,),
            candidates_kernel="reference_candidates_kernel",
            bench_budget=20_000,
        ),
    )
}
STRATEGIES: tuple[str, ...] = tuple(REGISTRY)
DEFAULT_STRATEGY = "fast"
MAX_NODES = 2**63 - 1  # node budgets are int64 in the kernels


def get_strategy(name: str) -> Strategy:
    """The strategy called `name`; ValueError naming the choices otherwise."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None
