"""The job table (`pipeline.jobs.JOBS`) is the one place a job is registered: what reads it
(the run loop, `pipeline`'s public names, the command line, the docs) and what cannot (the
warm-up's table of kernels, below the jobs; import-linter's static lists) agree with it."""

import tomllib
from importlib import import_module
from pathlib import Path

import pyarrow as pa
import pytest
from typer.main import get_command

import pipeline
from pipeline.cli import app
from pipeline.jobs import JOBS
from pipeline.jobs.augment.batch import AugmentOptions
from pipeline.jobs.generate.puzzles import accepted_grades, kernels
from pipeline.jobs.score.batch import ScoreOptions
from pipeline.jobs.solve.batch import SolveOptions
from pipeline.jobs.validate.batch import ValidateOptions
from pipeline.kernels.registry import STRATEGIES
from pipeline.run.loop import SINKS
from pipeline.run.warmup import KERNELS

ROOT = Path(__file__).resolve().parents[1]
JOB_NAMES = sorted(JOBS)


def test_every_package_under_jobs_is_in_the_table():
    packages = {p.name for p in (ROOT / "pipeline" / "jobs").iterdir()
                if (p / "__init__.py").exists()}  # fmt: skip
    assert packages == set(JOBS)


@pytest.mark.parametrize("name", JOB_NAMES)
def test_a_job_module_runs_as_its_entry_says(name):
    job = JOBS[name]
    assert job.name == name
    assert import_module(f"{job.package}.job").JOB is job  # what its file job starts with
    assert job.sink in SINKS
    assert job.formats and set(job.formats) <= {"parquet", "csv", "jsonl", "npy", "hrm"}
    assert not job.resumable or job.sink == "checkpoint"  # only kept parts can be resumed
    assert not job.suffix or job.suffix.endswith(".parquet")


@pytest.mark.parametrize("name", JOB_NAMES)
def test_a_jobs_public_names_are_the_packages_own(name):
    for public, module in JOBS[name].modules().items():
        assert pipeline._API[public] == module
        assert getattr(pipeline, public) is getattr(import_module(module), public)


@pytest.mark.parametrize("name", JOB_NAMES)
def test_a_jobs_command_is_registered_by_the_module_the_table_names(name):
    job = JOBS[name]
    assert job.command is not None
    command = get_command(app).commands[name]  # type: ignore[attr-defined]
    assert command.callback.__module__ == f"pipeline.cli.{job.command}"


@pytest.mark.parametrize("name", JOB_NAMES)
def test_every_kernel_a_job_names_is_one_the_warm_up_loads(name):
    assert set(JOBS[name].kernels) <= set(KERNELS)


def test_the_kernels_a_job_asks_for_are_in_its_entry():
    asked = {
        "solve": {k for s in STRATEGIES for k in SolveOptions(s, canonical=True, rate=True,
                                                             solver="c:x.so:f").kernels()},
        "validate": set(ValidateOptions(minimal=True, symmetry=True).kernels()),
        "score": set(ScoreOptions(rate=True).kernels()),
        "augment": set(AugmentOptions(2, 0).kernels()),
        "generate": set(kernels(accepted_grades("x_wing"))),
    }  # fmt: skip
    for name, wanted in asked.items():
        assert wanted <= set(JOBS[name].kernels), name


@pytest.mark.parametrize("job", [j for j in JOBS.values() if j.columns], ids=lambda j: j.name)
def test_a_jobs_documented_columns_each_have_a_meaning(job):
    page, section, function = job.columns
    assert f"<!-- {section}:start -->" in (ROOT / page).read_text()
    module, name = function.split(":")
    schema, meanings = getattr(import_module(f"{job.package}.{module}"), name)()
    assert isinstance(schema, pa.Schema) and set(schema.names) <= set(meanings)


def _contracts() -> list[dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return config["tool"]["importlinter"]["contracts"]


def test_the_import_contracts_name_every_job():
    """import-linter reads only its own lists: each job is in the jobs' layers (above the
    others when it runs another job's batches) and among the packages kept free of cycles."""
    contracts = _contracts()
    (layers,) = [c for c in contracts if c.get("containers") == ["pipeline.jobs"]]
    upper, lower = ({n.strip() for n in layer.split("|")} for layer in layers["layers"])
    assert upper == {name for name, job in JOBS.items() if job.uses}
    assert lower == {name for name, job in JOBS.items() if not job.uses}
    (acyclic,) = [c for c in contracts if c["type"] == "acyclic_siblings"]
    assert {job.package for job in JOBS.values()} <= set(acyclic["ancestors"])


def test_jobs_may_not_import_the_writers_internals():
    (contract,) = [c for c in _contracts() if c["name"].startswith("Jobs write through")]
    assert contract["source_modules"] == ["pipeline.jobs"]
    assert {"pipeline.io.sidecars", "pipeline.io.output", "pipeline.io.parquet_concat"} <= set(
        contract["forbidden_modules"]
    )
