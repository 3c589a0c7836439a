"""Where a solver kernel's time goes, instruction by instruction: one set through a strategy's
kernel under `perf`, with numba's functions named.

    perf record -F 4000 -o perf.data -- \\
        python -m benchmarks.kernel_profile run --set top1465 --seconds 5 --objects /tmp/kp
    perf report -i perf.data --no-children --sort symbol        # time by function
    python -m benchmarks.kernel_profile annotate perf.data --objects /tmp/kp --function propagate

`run` solves the set (moved by one random symmetry, as `versus_tdoku` does) again and again
for `--seconds`, counting to 2, and prints the rate. perf names code made at run time through
`/tmp/perf-<pid>.map` (`--map` to write it elsewhere): `run` writes one for every numba
function of the process. The kernels compile in the process itself, in a cache folder of its
own removed at the end: a kernel loaded from numba's cache keeps no module to name its
functions from. `--objects DIR` keeps each compiled library's object file and, in
`DIR/addresses.tsv`, the address each function's name resolved to.

`annotate` puts perf's samples of one function beside its machine code (`objdump`): the share
of the function's samples at each instruction. A function linked into several libraries has a
copy in each, and the program runs the copy its name resolved to (the first one loaded: not
always the one inlined where you expect); `annotate` picks the object file whose copy the
samples fit, instruction by instruction. A sample is charged to the instruction after the one
that waited: read a hot line as "the instruction before it was slow" (a load, a `pext`).

Needs `perf` and binutils (`objdump`, `nm`); on `--set sample` (the shipped sample) it needs
nothing from `../shared`. docs/BENCHMARKS.md ("Ideas measured", `fast`) shows what it found.
"""

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import NoReturn

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample.csv"
LARGEST_FUNCTION = 1 << 16  # bytes: a map entry never reaches further


def _libraries() -> list:
    """The code library of every compiled numba function and C callback of this process that
    still holds its module (compiled here, not loaded from a cache)."""
    from numba.core.ccallback import CFunc
    from numba.core.dispatcher import Dispatcher

    found = {}
    for thing in gc.get_objects():
        if isinstance(thing, Dispatcher):
            for compiled in thing.overloads.values():
                found[id(compiled.library)] = compiled.library
        elif isinstance(thing, CFunc):
            found[id(thing._library)] = thing._library
    return [lib for lib in found.values() if getattr(lib, "_final_module", None) is not None]


def _symbol_sizes(objects: list[Path]) -> dict[str, int]:
    """The largest size of each defined function symbol in `objects` (`nm -S`): {} without
    binutils."""
    sizes: dict[str, int] = {}
    if not objects or shutil.which("nm") is None:
        return sizes
    listing = subprocess.run(
        ["nm", "-S", "--defined-only", *map(str, objects)], capture_output=True, text=True
    ).stdout
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            sizes[parts[3]] = max(sizes.get(parts[3], 0), int(parts[1], 16))
    return sizes


def write_perf_map(path: Path, objects: Path | None = None) -> int:
    """Write perf's map of every numba function of this process (`start size name`, in hex)
    to `path`, and with `objects` each library's object file and `addresses.tsv` (a
    function's name, the address it resolved to); returns how many functions the map names."""
    addresses: dict[int, str] = {}
    files = []
    for number, library in enumerate(_libraries()):
        for function in library._final_module.functions:
            if function.is_declaration:
                continue
            address = library.get_pointer_to_function(function.name)
            if address:
                addresses[address] = function.name
        if objects is not None:
            objects.mkdir(parents=True, exist_ok=True)
            files.append(objects / f"library{number}.o")
            files[-1].write_bytes(library.serialize_using_object_code()[2][0])
    sizes = _symbol_sizes(files)
    starts = sorted(addresses)
    with open(path, "w") as out:
        for here, after in zip(starts, [*starts[1:], None], strict=True):
            room = LARGEST_FUNCTION if after is None else min(after - here, LARGEST_FUNCTION)
            size = min(sizes.get(addresses[here], room), room)
            out.write(f"{here:x} {size:x} {addresses[here]}\n")
    if objects is not None:
        with open(objects / "addresses.tsv", "w") as out:
            out.writelines(f"{name}\t{start:x}\n" for start, name in addresses.items())
    return len(addresses)


def _fail(message: str) -> NoReturn:
    """One line on stderr and exit status 2, as the command line does for a bad option."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def _puzzles(name: str, seed: int) -> np.ndarray:
    from benchmarks.common import SETS, SHARED_DATA, load_set
    from pipeline.io.opening import read_puzzles
    from pipeline.symmetry import random_symmetries

    if name == "sample":
        grids = read_puzzles(SAMPLE).grids
    elif name in SETS and (SHARED_DATA / SETS[name]).exists():
        grids = load_set(SETS[name])
    else:
        _fail(f"no set {name!r} here: 'sample', or one of {', '.join(SETS)}")
    return random_symmetries(grids, np.random.default_rng(seed))


def run(args: argparse.Namespace) -> None:
    """Compile here, write the map (and the objects), then solve the set for `seconds`."""
    from pipeline.kernels import solve_grids

    puzzles = _puzzles(args.set, args.seed)
    solve_grids(puzzles[:1], args.strategy)  # compiles: the libraries exist from here on
    perf_map = args.map or Path(f"/tmp/perf-{os.getpid()}.map")
    named = write_perf_map(perf_map, args.objects)
    passes = 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds or passes == 0:
        solve_grids(puzzles, args.strategy)
        passes += 1
    rate = passes * len(puzzles) / (time.perf_counter() - start)
    print(f"{args.set}: {len(puzzles):,} puzzles, {args.strategy}, {rate:,.0f} puzzles/s "
          f"({passes} passes); {named} functions named in {perf_map}")  # fmt: skip


def shares(
    samples: Counter, base: int, listing: list[tuple[int, str]]
) -> tuple[list[tuple[float, int, str]], int]:
    """`listing` (offset, instruction) of one function of an object file loaded at `base`,
    with the share of `samples` (address -> count) at each; and how many samples fell on an
    instruction's first byte (a copy the samples did not run in scatters them mid-instruction)."""
    total = sum(samples.values()) or 1
    on_starts = 0
    rows = []
    for offset, text in listing:
        count = samples.get(base + offset, 0)
        on_starts += count
        rows.append((100.0 * count / total, offset, text))
    return rows, on_starts


def _listing(obj: Path, symbol: str) -> list[tuple[int, str]] | None:
    """The instructions (offset in the object, text) of `symbol` in `obj`; None if absent."""
    dump = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}", str(obj)],
        capture_output=True,
        text=True,
    ).stdout
    rows = []
    for line in dump.splitlines():
        found = re.match(r"\s*([0-9a-f]+):\s+(\S.*)", line)
        if found:
            rows.append((int(found[1], 16), re.sub(r"<[^>]*>", "", found[2]).strip()))
    return rows or None


def annotate(args: argparse.Namespace) -> None:
    """Print the hot instructions of the function named like `--function`."""
    script = subprocess.run(
        ["perf", "script", "-i", str(args.perf_data), "-F", "ip,sym"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    by_symbol: dict[str, Counter] = {}
    for line in script.splitlines():
        parts = line.split()
        if len(parts) == 2 and args.function in parts[1]:
            by_symbol.setdefault(parts[1], Counter())[int(parts[0], 16)] += 1
    if not by_symbol:
        _fail(f"no samples in a function named like {args.function!r}")
    symbol, samples = max(by_symbol.items(), key=lambda item: sum(item[1].values()))
    resolved = dict(
        line.split("\t") for line in (args.objects / "addresses.tsv").read_text().splitlines()
    )
    start = int(resolved[symbol], 16)
    best = None
    for obj in sorted(args.objects.glob("*.o")):
        listing = _listing(obj, symbol)
        if listing is None:
            continue
        rows, fit = shares(samples, start - listing[0][0], listing)
        if best is None or fit > best[0]:
            best = (fit, obj, rows)
    if best is None:
        _fail(f"{symbol} is in none of the objects in {args.objects}")
    fit, obj, rows = best
    total = sum(samples.values())
    print(f"{symbol[:100]}: {total:,} samples, {100 * fit / total:.0f}% on instruction "
          f"starts of its copy in {obj.name}; instructions at {args.min}% or more:")  # fmt: skip
    for share, offset, text in rows:
        if share >= args.min:
            print(f"{share:6.1f}% {offset:6x}: {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    solve = modes.add_parser("run", help="solve a set again and again, the functions named")
    solve.add_argument("--set", default="sample", help="a public set's name, or 'sample'")
    solve.add_argument("--strategy", default="fast")
    solve.add_argument("--seconds", type=float, default=5.0)
    solve.add_argument("--seed", type=int, default=1, help="the symmetries' seed")
    solve.add_argument("--map", type=Path, help="perf's map (default /tmp/perf-<pid>.map)")
    solve.add_argument("--objects", type=Path, help="keep the object files here")
    show = modes.add_parser("annotate", help="a function's samples beside its machine code")
    show.add_argument("perf_data", type=Path)
    show.add_argument("--objects", type=Path, required=True)
    show.add_argument("--function", required=True, help="part of the function's name")
    show.add_argument("--min", type=float, default=0.5, help="smallest share shown, in %%")
    args = parser.parse_args()
    if args.mode == "annotate":
        annotate(args)
        return
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache  # before numba or the kernels are imported
        run(args)


if __name__ == "__main__":
    main()
