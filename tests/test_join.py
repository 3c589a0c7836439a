"""The end of a run to a file (pipeline/run/join.py, pipeline/run/checkpoint.py): the parts are
joined into the output one at a time, each freed once copied; a join stopped at any moment is
continued by `--resume` with every row once; and `--resume` beside a complete Parquet output
of the same inputs and options leaves it as it is."""

import os
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import pipeline.run.join as join
from pipeline import generate, solve_file
from pipeline.run.checkpoint import Checkpoint


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("join") / "corpus.csv"
    generate(120, seed=8).write_csv(path)
    return path


def _read(out: Path) -> pl.DataFrame:
    frame = (
        pl.read_parquet(out) if out.suffix == ".parquet" else pl.read_csv(out, infer_schema=False)
    )
    return frame.drop("solve_ns")


class Stop(BaseException):
    """What the injected fault raises (a BaseException: nothing on the way catches it)."""


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("at", range(1, 12))  # 5 parts: data and note each, then the end
def test_a_join_stopped_at_any_point_is_continued_by_resume(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str, at: int
) -> None:
    """Each flush to disk of the join (a part's data, its journal line, ..., the whole file)
    is a moment a crash may come: stopped there, the checkpoint holds what it should, and
    `--resume` finishes with the same output a run that was never stopped writes."""
    baseline = tmp_path / f"baseline.{fmt}"
    whole = solve_file(corpus, baseline, batch_size=25, progress=False)
    out = tmp_path / f"out.{fmt}"
    calls = [0]
    real = join.durable

    def durable(f: object) -> None:
        calls[0] += 1
        if calls[0] == at:
            raise Stop
        real(f)

    monkeypatch.setattr(join, "durable", durable)
    with pytest.raises(Stop):
        solve_file(corpus, out, batch_size=25, progress=False)
    monkeypatch.setattr(join, "durable", real)
    folder = Checkpoint(out, fmt).folder
    assert folder.exists() and not out.exists()
    assert len(list(folder.glob("part-*"))) == 5 - (at - 1) // 2  # those copied are freed

    resumed = solve_file(corpus, out, batch_size=25, progress=False, resume=True)

    assert_frame_equal(_read(out), _read(baseline))
    assert resumed.verdicts == whole.verdicts and resumed.rows == whole.rows
    assert not folder.exists()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_stop_after_the_output_is_in_place_but_before_its_checkpoint_goes(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """The last moment a crash may come: the joined file renamed to the output, its
    checkpoint (a journal of every part copied, no part left) not removed yet. `--resume`
    finds the work done by the journal and leaves the output as it is, its checkpoint
    removed; it used to fail on the joined file the journal names ("shorter than ...")."""
    out = tmp_path / f"out.{fmt}"
    whole = solve_file(corpus, out, batch_size=25, progress=False)
    expected = _read(out)
    monkeypatch.setattr(Checkpoint, "remove", lambda self: None)  # the stop: it never runs
    solve_file(corpus, out, batch_size=25, progress=False)
    monkeypatch.undo()
    folder = Checkpoint(out, fmt).folder
    assert out.exists() and (folder / join.JOURNAL).exists()
    assert not list(folder.glob("part-*")) and not join.joined_path(folder, fmt).exists()
    written = out.stat().st_mtime_ns

    resumed = solve_file(corpus, out, batch_size=25, progress=False, resume=True)

    assert_frame_equal(_read(out), expected)
    assert resumed.verdicts == whole.verdicts and resumed.rows == whole.rows
    assert out.stat().st_mtime_ns == written
    assert not folder.exists()


def test_a_join_does_not_hold_the_output_twice(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While it joins, the parts copied are gone: parts plus output never hold two copies."""
    out = tmp_path / "out.parquet"
    seen: list[int] = []
    real_copy = join._copy

    def copy(part: join.Waiting, *args: object) -> join.Copied:
        folder = part.path.parent
        seen.append(sum(p.stat().st_size for p in folder.iterdir() if p.is_file()))
        return real_copy(part, *args)  # type: ignore[arg-type]

    largest = [0]
    real_join = join.join_freeing

    def join_freeing(folder: Path, fmt: str, waiting: list[join.Waiting], *args: object) -> None:
        largest[0] = max(p.path.stat().st_size for p in waiting)
        real_join(folder, fmt, waiting, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(join, "_copy", copy)
    monkeypatch.setattr("pipeline.run.checkpoint.join_freeing", join_freeing)
    solve_file(corpus, out, batch_size=10, progress=False)
    assert len(seen) == 12
    assert max(seen) <= seen[0] + largest[0]  # a part more than the parts, never twice


def test_resume_of_a_complete_output_leaves_it_as_it_is(
    corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.parquet"
    first = solve_file(corpus, out, progress=False)
    written = out.stat().st_mtime_ns

    again = solve_file(corpus, out, progress=False, resume=True)

    assert out.stat().st_mtime_ns == written
    assert "is complete and its inputs and options are unchanged; left as it is" in (
        capsys.readouterr().err
    )
    assert again.verdicts == first.verdicts and again.rows == first.rows
    other = solve_file(corpus, out, progress=False, resume=True, solutions=1)  # other options
    assert out.stat().st_mtime_ns != written and other.verdicts.get("found") == first.rows


def test_resume_runs_again_when_the_input_changed(corpus: Path, tmp_path: Path) -> None:
    source = tmp_path / "corpus.csv"
    source.write_bytes(corpus.read_bytes())
    out = tmp_path / "out.parquet"
    solve_file(source, out, progress=False)
    written = out.stat().st_mtime_ns
    os.utime(source, ns=(written + 10**9, written + 10**9))  # touched: maybe changed

    solve_file(source, out, progress=False, resume=True)

    assert out.stat().st_mtime_ns != written


def test_a_text_output_holds_no_record_so_resume_runs_again(corpus: Path, tmp_path: Path):
    out = tmp_path / "out.csv"
    solve_file(corpus, out, progress=False)
    written = out.stat().st_mtime_ns
    solve_file(corpus, out, progress=False, resume=True)
    assert out.stat().st_mtime_ns != written
