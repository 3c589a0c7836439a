"""A cached kernel is checked against every file whose code it may hold, not only its own
(numba's check): a kernel links its parts' code and reads constants from other files, and an
upgrade or an edit that changed one of them loaded it stale."""

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pipeline.compiled import KERNEL_SOURCES, PACKAGE, kernel_sources
from tests.test_compiled import environment

KERNEL = re.compile(r"@kernel|@inline_part|@intrinsic|@njit|cfunc\(")


def _module_file(name: str) -> Path | None:
    path = PACKAGE.parent.joinpath(*name.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(path: Path) -> set[Path]:
    """The package's modules `path` imports (with `from pipeline.x import y`, y too when it
    is a module)."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipeline"):
            names = [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("pipeline")]
        found.update(f for f in map(_module_file, names) if f is not None)
    return found


def test_the_stamp_covers_every_file_a_kernel_may_hold_code_of():
    """Every module that defines a numba function, and every module of the package those
    import, one after another, is among `KERNEL_SOURCES`."""
    todo = [p for p in PACKAGE.rglob("*.py") if KERNEL.search(p.read_text())]
    assert len(todo) > 20
    closure: set[Path] = set()
    while todo:
        path = todo.pop()
        if path not in closure:
            closure.add(path)
            todo.extend(_imported(path) - closure)
    covered = set(kernel_sources())
    missing = sorted(str(p.relative_to(PACKAGE)) for p in closure - covered)
    assert not missing, f"add to KERNEL_SOURCES: {missing}"
    assert all((PACKAGE / name).exists() for name in KERNEL_SOURCES)


PROBE = (
    "import numpy as np, warnings\n"
    "from pipeline.compiled import kernel_cached\n"
    "from pipeline.kernels.checks import first_clash\n"
    "cached = kernel_cached('pipeline.kernels.checks', '_first_clash_kernel')\n"
    "with warnings.catch_warnings(record=True) as said:\n"
    "    warnings.simplefilter('always')\n"
    "    first_clash(np.ones((1, 81), np.uint8))\n"
    "compiled = any('compiling' in str(w.message) for w in said)\n"
    "print(cached, compiled)\n"
)


def test_a_change_to_a_file_a_kernel_holds_code_of_compiles_it_again(tmp_path):
    """In a copy of the package: the clash kernel compiles once, is loaded from the cache
    after, compiles again once a file among the kernel sources changed (not its own), and
    is loaded after a change to a file no kernel holds code of; `kernel_cached` says so each
    time beforehand."""
    site = tmp_path / "site"
    shutil.copytree(PACKAGE, site / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    env = environment(XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(site))

    def compiles() -> bool:
        """Whether the kernel compiled; and `kernel_cached`, asked before, said so."""
        done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                              text=True, timeout=300, cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
        cached, compiled = done.stdout.split()
        assert cached != compiled, done.stdout  # the warm-up plans by what it says
        return compiled == "True"

    assert compiles()
    assert not compiles()
    part = site / "pipeline" / "kernels" / "units.py"  # not checks.py: numba checks that one
    part.write_text(part.read_text() + "\n# changed\n")
    assert compiles()
    assert not compiles()
    elsewhere = site / "pipeline" / "cli" / "help.py"
    elsewhere.write_text(elsewhere.read_text() + "\n# changed\n")
    assert not compiles()
