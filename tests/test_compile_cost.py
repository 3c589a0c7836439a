"""What keeps a first compile short: no kernel assigns an array to a slice.

`out[a:b] = other` (or `best[:] = keys`) in a numba function makes numba compile the message of
its shape-mismatch error with it: `str`, `repr` and f-strings of tuples, 2.2 of the `mrv`
kernel's 5.0 CPU s and 1.7 of the complete grids' canonical form's 4.7 (numba 0.68, measured
with its `numba:compile` events, docs/BENCHMARKS.md "Compile time"). Element by element, in a
loop, compiles none of it and runs as fast. A constant (`used[:] = 0`) is fine."""

import ast
from pathlib import Path

from pipeline.compiled import kernel_sources

NUMBA_DECORATORS = {"kernel", "kernel_part", "inline_part", "njit", "jit", "cfunc"}


def _decorator_name(node: ast.expr) -> str | None:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    return isinstance(node, ast.Constant)


def _sliced(index: ast.expr) -> bool:
    elements = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(e, ast.Slice) for e in elements)


def slices_assigned_arrays(source: str, name: str = "<source>") -> list[str]:
    """`file:line: statement` of each assignment of a non-constant to a slice inside a numba
    function of `source`."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef):
            continue
        if not any(_decorator_name(d) in NUMBA_DECORATORS for d in function.decorator_list):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and not _constant(node.value):
                for target in node.targets:
                    if isinstance(target, ast.Subscript) and _sliced(target.slice):
                        found.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_finds_an_array_assigned_to_a_slice():
    source = (
        "@kernel\n"
        "def copy(board, solution, chosen, rows):\n"
        "    solution[:] = 0\n"
        "    chosen[0, :] = -1\n"
        "    solution[:] = board\n"
        "    chosen[5:14] = rows\n"
        "\n"
        "def in_python(a, b):\n"
        "    a[:] = b\n"
    )
    assert slices_assigned_arrays(source) == [
        "<source>:5: solution[:] = board",
        "<source>:6: chosen[5:14] = rows",
    ]


def test_no_kernel_assigns_an_array_to_a_slice():
    found = [
        line
        for path in kernel_sources()
        for line in slices_assigned_arrays(path.read_text(), Path(path).name)
    ]
    assert not found, "copy element by element (this module's docstring says why):\n" + "\n".join(
        found
    )
