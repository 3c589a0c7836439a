"""The errors a caller catches: exported from `pipeline`, caught the usual way (a bad input is a
`ValueError`, a missing file also a `FileNotFoundError`), and still one line and exit code 2 on
the command line."""

import errno

import pytest

import pipeline
from tests.conftest import assert_one_line_error, cli

PUBLIC_ERRORS = ["PipelineError", "InputError", "InputNotFoundError", "CheckpointError",
                 "ReportError", "RunFailed", "RunInterrupted"]  # fmt: skip


@pytest.mark.parametrize("name", PUBLIC_ERRORS)
def test_the_public_errors_are_exported_from_pipeline(name):
    from pipeline import errors

    assert getattr(pipeline, name) is getattr(errors, name)
    assert name in pipeline.__all__


def test_a_bad_input_is_a_value_error():
    assert issubclass(pipeline.InputError, ValueError)
    with pytest.raises(ValueError, match="unknown format"):
        pipeline.solve_file("puzzles.xlsx")


def test_a_missing_input_file_is_a_file_not_found_error_naming_the_file(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(FileNotFoundError) as caught:
        pipeline.solve_file(missing)
    assert isinstance(caught.value, pipeline.InputError)
    assert str(caught.value) == f"{missing}: no such file"  # the one line the CLI prints
    assert caught.value.errno == errno.ENOENT and caught.value.filename == str(missing)


def test_a_glob_that_matches_nothing_is_a_file_not_found_error(tmp_path):
    with pytest.raises(pipeline.InputNotFoundError, match="no file matches"):
        pipeline.solve_file(str(tmp_path / "*.csv"))


def test_a_missing_result_file_is_a_report_error_and_a_file_not_found_error(tmp_path):
    from pipeline.report import report

    with pytest.raises(FileNotFoundError) as caught:
        report(tmp_path / "nope.parquet")
    assert isinstance(caught.value, pipeline.ReportError)


def test_the_command_still_says_a_missing_file_in_one_line_with_exit_code_2(tmp_path):
    done = cli("solve", tmp_path / "nope.csv")
    assert done.exit_code == 2
    assert_one_line_error(done.stderr, "nope.csv: no such file")
