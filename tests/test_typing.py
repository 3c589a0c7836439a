"""The public API as a type checker sees it through `import pipeline`: every public name with
its real type (not `Any` from the lazy `__getattr__`), so a wrong name or argument is an error
(issue 24). mypy runs on snippets here; `make lint` runs it on tests/typecheck/."""

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pipeline

ROOT = Path(__file__).resolve().parents[1]


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mypy is missing: pip install -e '.[test]'")
        pytest.skip("mypy is not installed")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(code)
    argv = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(ROOT / ".mypy_cache"), str(snippet)]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_mypy_reports_a_name_pipeline_does_not_have_and_a_wrong_argument(tmp_path):
    done = _mypy(tmp_path, "import pipeline\n\npipeline.not_a_function()\npipeline.generate('3')\n")

    assert done.returncode == 1, done.stdout + done.stderr
    assert 'snippet.py:3: error: Module has no attribute "not_a_function"' in done.stdout
    assert (
        'snippet.py:4: error: Argument 1 to "generate" has incompatible type "str"' in done.stdout
    )


def test_mypy_sees_the_real_types_of_public_names(tmp_path):
    code = "import pipeline\n\nreveal_type(pipeline.is_valid)\nreveal_type(pipeline.__version__)\n"
    done = _mypy(tmp_path, code)

    assert 'Revealed type is "def (board: ' in done.stdout, done.stdout
    assert re.search(r'Revealed type is "(builtins\.)?str"', done.stdout), done.stdout


def _checked_imports() -> dict[str, str]:
    """name -> module of the imports under `if TYPE_CHECKING:` in pipeline/__init__.py."""
    tree = ast.parse(Path(pipeline.__file__).read_text())
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    return {a.asname or a.name: node.module for node in block.body
            if isinstance(node, ast.ImportFrom) for a in node.names}  # fmt: skip


def test_every_public_name_is_imported_for_type_checkers_from_where_it_lives():
    assert _checked_imports() == pipeline._API
