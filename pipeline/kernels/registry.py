"""The strategies, in one table: what each is, where its kernel lives, what it can do.

Everything that lists strategies reads this table: the solver facade (`solve_grids`), the
command line's `--strategy` choices, each strategy's default node budget, the report's colours.
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
    # the kernel takes the search's propagations' addresses (`fast_entries.search_entries`)
    # as its first leading argument, before the flags
    entries: bool = False
    # the node budget a puzzle gets when none is given, in every command and the Python API
    # alike (`node_budget`): the reference searches give up on the hardest puzzles at 20,000
    # nodes (verdict `limit`) instead of running for minutes; None: no budget
    default_budget: int | None = None
    # the kernel's twin for pencilmark puzzles (`(n, 81) uint16` candidates in place of the
    # grids), in the same module; None: the strategy takes grids only
    candidates_kernel: str | None = None

    def load(self, candidates: bool = False) -> Callable[..., None]:
        """The strategy's numba kernel (its twin for pencilmark puzzles with `candidates`)."""
        if candidates and self.candidates_kernel is None:
            raise ValueError(f"strategy {self.name!r} does not take candidates")
        name = self.candidates_kernel if candidates else self.kernel
        return getattr(import_module(self.module), str(name))

    def leading(self) -> tuple[object, ...]:
        """The kernel's leading arguments, between `skip` and `max_solutions`."""
        if not self.entries:
            return self.flags
        from pipeline.kernels.fast_entries import search_entries

        return (search_entries(), *self.flags)

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
            entries=True,
            candidates_kernel="solve_candidates_kernel",
        ),
        Strategy(
            "mrv",
            "backtracking on the empty cell with the fewest allowed digits, no propagation",
            "pipeline.kernels.reference",
            "reference_kernel",
            flags=(True,),
            candidates_kernel="reference_candidates_kernel",
            default_budget=20_000,
        ),
        Strategy(
            "backtrack",
            "backtracking over the empty cells in row-major order, digits 1 to 9",
            "pipeline.kernels.reference",
            "reference_kernel",
            flags=(False,),
            candidates_kernel="reference_candidates_kernel",
            default_budget=20_000,
        ),
    )
}
STRATEGIES: tuple[str, ...] = tuple(REGISTRY)
DEFAULT_STRATEGY = "fast"
MAX_NODES = 2**63 - 1  # node budgets are int64 in the kernels


def node_budget(strategy: str, max_nodes: int | None = None) -> int | None:
    """The node budget of a puzzle searched by `strategy`: `max_nodes` when given, else the
    strategy's `default_budget` (None: no budget). One rule for every command."""
    return max_nodes if max_nodes is not None else get_strategy(strategy).default_budget


def budgets_text() -> str:
    """The default budgets, for --help: `fast none, mrv 20,000, backtrack 20,000`."""
    return ", ".join(
        f"{s.name} {'none' if s.default_budget is None else f'{s.default_budget:,}'}"
        for s in REGISTRY.values()
    )


def get_strategy(name: str) -> Strategy:
    """The strategy called `name`; ValueError naming the choices otherwise."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}"
        ) from None
