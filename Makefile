# The README's commands. Everything runs inside a local venv that `make` creates on first use.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The package's bytecode, written as pip writes it for a regular install (an editable one
# leaves it to the first import, which PYTHONDONTWRITEBYTECODE=1 turns into a compile of
# every module at every start: ~0.05 s of each run); only changed modules are compiled again.
PYCACHE = $(BIN)/python -m compileall -q pipeline
DEV    := $(VENV)/.installed-dev

.PHONY: venv run test floors stress lint format bench data docs docs-site dist sdist-check clean clean-kernels

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	$(PYCACHE)
	touch $(STAMP)

# Tests, lint and benchmarks also need the test tools, the optional Dask executor and the
# HTML report's plots (matplotlib).
$(DEV): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,dask,report]'
	touch $(DEV)

# The main job on the shipped sample.
run: venv
	$(PYCACHE)
	$(BIN)/sudoku-pipeline solve data/sample.csv

# The suite in worker processes (pytest-xdist), one a core, at most 4 (a test may start
# processes of its own): on 2 cores 8 min instead of 12.5. `make test WORKERS=0`: in one.
WORKERS ?= auto
PARALLEL = -n $(WORKERS) --maxprocesses 4

test: $(DEV)
	$(BIN)/python -m pytest -q $(PARALLEL)

# The declared minimum version of every direct dependency (pyproject.toml's `>=`), installed
# exactly in .venv-floors, and the smoke tests run there: scripts/floors.py.
floors: $(DEV)
	$(BIN)/python -m scripts.floors

# The whole suite N times in a row as `make test` runs it, beside LOAD processes that keep the
# cores busy (solving, in a loop), every other round in reverse order; stops at the first failure, then prints
# "N/N green, median X s". Output of each round in artifacts/stress/. `make stress N=3`.
N    ?= 10
LOAD ?= 2
stress: $(DEV)
	$(BIN)/python -m scripts.stress --rounds $(N) --load $(LOAD) -- $(PARALLEL)

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy tests/typecheck

format: $(DEV)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Each script rewrites its own section of docs/BENCHMARKS.md; TDOKU_BENCH=path/to/run_benchmark
# adds tdoku measured side by side (benchmarks/versus_tdoku.py; skipped without it).
bench: $(DEV)
	$(PYCACHE)
	$(BIN)/python -m benchmarks.kernels --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.versus_tdoku --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.external_solvers --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.counting --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.pipeline_e2e --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.validate_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.timing_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.canonical_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.rating_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.split_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.augment_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.hrm_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.leak_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.enumerate_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.dask_bench --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.dask_bench --command validate --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.dask_bench --command split --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.dask_bench --command augment --write docs/BENCHMARKS.md
	$(BIN)/python -m benchmarks.first_run --kernels --write docs/BENCHMARKS.md

# Regenerate the shipped samples in data/ (reproducible: fixed seeds).
data: $(DEV)
	$(BIN)/python scripts/make_samples.py

# Regenerate the docs' sections that the code defines (tests/test_docs.py checks them).
docs: $(DEV)
	$(BIN)/python -m scripts.docs

# The docs site from docs/ (mkdocs.yml), into site/; --strict: a broken link or a page left out
# of the nav fails (CI builds it).
docs-site: $(DEV)
	$(BIN)/python -m pip install -q -e '.[docs]'
	$(BIN)/python -m mkdocs build --strict

# A wheel and an sdist in dist/ (python -m build, installed into .venv on first use).
dist: venv
	$(BIN)/python -m pip install -q build
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

# The sdist installed in a fresh venv (with its test extra) and the smoke tests run from the
# unpacked sdist, not from this checkout: what it ships is enough for its tests (CI runs it).
sdist-check: dist
	$(BIN)/python -m scripts.sdist_check dist

# This checkout's compiled kernels, in the user's cache folder (pipeline/compiled.py): numba
# sees a change of the file a kernel is in, not of the files whose functions it calls.
clean-kernels:
	test ! -x $(BIN)/python || $(BIN)/python -c "import shutil, pipeline.compiled as c; \
	[shutil.rmtree(c.cache_folder(p), ignore_errors=True) for p in c.PACKAGE.rglob('*.py')]"

clean: clean-kernels
	rm -rf $(VENV) .venv-floors .venv-sdist .pytest_cache .ruff_cache .hypothesis build dist site *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
