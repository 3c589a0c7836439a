"""Enums that survive the file: `verdict` and `grade` (and validate's `code` and `level`) come
back from Parquet as polars Enums in their own order, not as Categoricals sorted by spelling;
`grade_level` orders grades in SQL engines, which read the words as text. `report` reads the
files written before this too."""

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.jobs.validate.catalogue import CODES, LEVELS
from pipeline.kernels.codes import VERDICT_NAMES

SEED = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
SOLUTION = "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
EMPTY = "." * 81
CLASH = "11" + "." * 79


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A small corpus with every common verdict and several grades, as a CSV file."""
    folder = tmp_path_factory.mktemp("corpus")
    puzzles = pipeline.generate(40, seed=3)["puzzle"].to_list() + [SEED, EMPTY, CLASH, "bad"]
    path = folder / "corpus.csv"
    pl.DataFrame({"puzzle": puzzles}).write_csv(path)
    return path


@pytest.fixture(scope="module")
def rated(corpus):
    """`solve --rate` of the corpus in several batches on two workers: parts joined."""
    out = corpus.with_name("rated.parquet")
    pipeline.solve_file(corpus, out, rate=True, rate_samples=2, batch_size=10, workers=2)
    return out


def test_polars_reads_the_verdict_back_as_an_enum_in_the_kernels_order(rated):
    frame = pl.read_parquet(rated)
    assert frame.schema["verdict"] == pl.Enum(VERDICT_NAMES)
    assert pl.scan_parquet(rated).collect_schema()["verdict"] == pl.Enum(VERDICT_NAMES)
    in_order = frame.sort("verdict")["verdict"].unique(maintain_order=True).to_list()
    assert in_order == ["solved", "multiple", "invalid", "malformed"]  # not alphabetical


def test_polars_reads_the_grade_back_as_an_enum_in_ladder_order(rated):
    frame = pl.read_parquet(rated)
    assert frame.schema["grade"] == pl.Enum(pipeline.GRADES)
    grades = frame.drop_nulls("grade").sort("grade")["grade"].cast(pl.String).to_list()
    ladder = [pipeline.GRADES.index(g) for g in grades]
    assert ladder == sorted(ladder) and len(set(grades)) > 1


def test_grade_level_orders_grades_where_the_grade_is_read_as_text(rated):
    """What an SQL engine sees (DuckDB reads a Parquet dictionary column as VARCHAR): the
    grade as text and `grade_level`, its 0-based place on the ladder, null where it is."""
    table = pq.read_table(rated, columns=["grade", "grade_level"])
    assert table.schema.field("grade_level").type == pa.int8()
    grades = table.column("grade").cast(pa.string()).to_pylist()
    levels = table.column("grade_level").to_pylist()
    assert levels == [None if g is None else pipeline.GRADES.index(g) for g in grades]
    assert None in levels  # the malformed and invalid rows


def test_the_grade_level_is_documented_next_to_the_grade():
    from pipeline.results.schema import COLUMNS

    names = list(COLUMNS)
    assert names.index("grade_level") == names.index("grade") + 1


def test_solve_batch_gives_the_verdict_as_an_enum():
    assert pipeline.solve_batch([SEED]).schema["verdict"] == pl.Enum(VERDICT_NAMES)


def test_validate_writes_code_and_level_as_enums_errors_first(corpus, tmp_path):
    out = tmp_path / "findings.parquet"
    pipeline.validate_file(corpus, out, batch_size=10, workers=2)
    findings = pl.read_parquet(out)
    assert findings.schema["code"] == pl.Enum(list(CODES))
    assert findings.schema["level"] == pl.Enum(list(LEVELS))
    levels = findings.sort("level")["level"].unique(maintain_order=True).to_list()
    assert levels == [level for level in LEVELS if level in levels] and "error" in levels


def test_validate_puzzles_gives_code_and_level_as_enums():
    findings = pipeline.validate_puzzles([SEED, CLASH, SEED])
    assert findings.schema["code"] == pl.Enum(list(CODES))
    assert findings.schema["level"] == pl.Enum(list(LEVELS))


def test_a_text_output_holds_the_words(corpus, tmp_path):
    out = tmp_path / "rated.csv"
    pipeline.solve_file(corpus, out, rate=True, rate_samples=0)
    frame = pl.read_csv(out, schema_overrides={"solution": pl.String, "puzzle": pl.String})
    assert set(frame["verdict"]) == {"solved", "multiple", "invalid", "malformed"}
    assert frame["grade_level"].dtype == pl.Int64 and frame["grade"].dtype == pl.String


def _as_written_before(path, to):
    """The file as versions before the Enums wrote it: dictionaries with no polars metadata
    (read back as Categoricals), no `grade_level`."""
    table = pq.read_table(path)
    table = table.drop_columns(["grade_level"])
    fields = [pa.field(f.name, f.type, f.nullable) for f in table.schema]
    pq.write_table(table.cast(pa.schema(fields, metadata=table.schema.metadata)), to)
    assert pl.read_parquet(to).schema["verdict"] == pl.Categorical
    return to


def test_report_reads_files_written_before_the_enums_and_after_alike(rated, tmp_path):
    from pipeline.report import report

    old = _as_written_before(rated, tmp_path / "old.parquet")
    both = report([rated, old])
    new, before = both.figures
    assert before == new and new["ratings"]["by_grade"]
    assert len(both.comparisons) == 1  # one corpus: the runs joined by puzzle
