"""The sdist runs its own tests: unpacked in a temporary folder, installed (with its `test`
extra) in a fresh venv, and the smoke tests (those `make floors` runs, the docs' too) run from
the unpacked sdist, never from this checkout.

    python -m scripts.sdist_check dist      # after `make dist`; exit 1 when a test fails
"""

import argparse
import subprocess
import sys
import tarfile
import tempfile
import venv
from pathlib import Path

from scripts.floors import SMOKE

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-sdist"
EXTRA = ["tests/test_docs.py", "tests/test_enumeration.py"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("dist", type=Path, help="the folder `make dist` wrote")
    args = parser.parse_args()
    sdists = sorted(args.dist.glob("sudoku_pipeline-*.tar.gz"))
    if len(sdists) != 1:
        sys.exit(f"error: expected one sdist in {args.dist}, found {len(sdists)}")
    with tempfile.TemporaryDirectory() as scratch:
        with tarfile.open(sdists[0]) as archive:
            archive.extractall(scratch, filter="data")
        (tree,) = Path(scratch).iterdir()
        missing = [
            t
            for t in [*SMOKE, *EXTRA, "tests/conftest.py", "data/sample.csv"]
            if not (tree / t).exists()
        ]
        if missing:
            sys.exit(f"error: the sdist lacks {', '.join(missing)}")
        venv.create(VENV, with_pip=True, clear=True)
        python = VENV / "bin" / "python"
        subprocess.run([python, "-m", "pip", "install", "-q", f"{tree}[test,report]"], check=True)
        # the tests run in the unpacked tree, against the package installed from the sdist
        done = subprocess.run(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", *SMOKE, *EXTRA], cwd=tree
        )
        sys.exit(done.returncode)


if __name__ == "__main__":
    main()
