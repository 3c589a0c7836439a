"""Every fenced `sh` and `python` block of README.md and docs/guide/*.md runs as written, in an
empty temporary folder: one test a page, its blocks in page order (consecutive shell blocks in
one bash session, Python blocks in one namespace, like a notebook's cells). A block that cannot
run here starts with the visible line `# not run in the docs' tests: <why>`; there are few."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SKIP = "# not run in the docs' tests:"
SHELLS = {"sh", "bash", "shell"}


def blocks(page: Path) -> list[tuple[str, str]]:
    """(kind, code) of each runnable block, in page order: kind `sh` or `python`."""
    found = []
    for lang, code in FENCE.findall(page.read_text(encoding="utf-8")):
        kind = "sh" if lang in SHELLS else lang
        if kind in ("sh", "python") and not code.lstrip().startswith(SKIP):
            found.append((kind, code))
    return found


def run_shell(code: str, folder: Path, where: str) -> None:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    done = subprocess.run(["bash", "-eu", "-c", code], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"{where} exited {done.returncode}:\n{code}\n{done.stderr[-3000:]}")


def test_the_pages_have_examples_and_few_are_skipped():
    skipped = sum(p.read_text(encoding="utf-8").count(SKIP) for p in PAGES)
    runnable = sum(len(blocks(p)) for p in PAGES)
    assert blocks(ROOT / "README.md") and runnable >= 2 * len(PAGES)
    assert skipped <= 8, f"{skipped} blocks are not run: keep them few"


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_example_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__example__"}
    shell: list[str] = []
    for number, (kind, code) in enumerate([*blocks(page), ("end", "")], start=1):
        if kind != "sh" and shell:
            run_shell("\n".join(shell), tmp_path, f"{page.name}'s shell blocks before {number}")
            shell = []
        if kind == "sh":
            shell.append(code)
        elif kind == "python":
            try:
                exec(compile(code, f"{page.name} block {number}", "exec"), namespace)
            except Exception as e:  # say which block, then fail with the error itself
                pytest.fail(f"{page.name} python block {number} raised {type(e).__name__}: {e}")
