"""`split`'s inputs: a URL's manifest entry has the size and sha256 of what was read (as a
file's has), whether it was read as text, by ranges (Parquet) or as a stream (no format in its
name); every file's sha256, inputs and outputs, is that of its bytes; a file with pencilmark
rows among 81-character ones is one clear line, nothing written."""

import hashlib

import polars as pl
import pytest

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.jobs.split.job import split_file
from pipeline.pencilmarks import candidates_of, format_pencilmarks
from tests.conftest import assert_one_line_error, cli
from tests.test_remote import serve

FRACTIONS = "0.5,0.5"


@pytest.mark.parametrize(
    ("name", "fmt", "compression"),
    [("p.csv.gz", "csv", "gzip"), ("p.parquet", "parquet", None), ("p.txt", "txt", None)],
)
def test_a_url_input_has_the_size_and_sha256_of_what_was_read(
    server,
    tmp_path,
    name,
    fmt,
    compression,
):
    url = serve(server, name, fmt, compression)
    stored = (server.folder / name).read_bytes()
    manifest = split_file(url, tmp_path / "out", fractions=FRACTIONS, progress=False)
    entry = manifest.inputs[0]
    assert entry["path"] == url
    assert entry["size_bytes"] == len(stored)
    assert entry["sha256"] == hashlib.sha256(stored).hexdigest()


def test_a_url_read_as_a_stream_has_its_digest_too(server, tmp_path):
    serve(server, "p.csv", "csv")
    (server.folder / "noformat").write_bytes((server.folder / "p.csv").read_bytes())
    stored = (server.folder / "noformat").read_bytes()
    manifest = split_file(server / "noformat", tmp_path / "out", fractions=FRACTIONS,
                          progress=False)  # fmt: skip
    assert manifest.inputs[0]["sha256"] == hashlib.sha256(stored).hexdigest()
    assert manifest.inputs[0]["size_bytes"] == len(stored)


@pytest.mark.parametrize("fmt", ["parquet", "npy", "hrm"])
def test_files_have_the_sha256_of_their_bytes_inputs_and_outputs_alike(tmp_path, fmt):
    """Local inputs are hashed while they are solved, each split's files as soon as it is
    written (`manifest.Digests`): every digest the manifest gives is that of the bytes."""
    frame = generate(40, seed=4).select("id", "puzzle", "solution")
    first, second = tmp_path / "a.csv", tmp_path / "b.parquet"
    frame.head(25).write_csv(first)
    frame.tail(15).write_parquet(second)
    out = tmp_path / "out"
    augment = {"augment": 2} if fmt == "hrm" else {}
    manifest = split_file([first, second], out, fractions=FRACTIONS, format=fmt, seed=3,
                          progress=False, **augment)  # fmt: skip
    for entry, path in zip(manifest.inputs, (first, second), strict=True):
        assert entry["size_bytes"] == path.stat().st_size
        assert entry["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    written = {str(f.relative_to(out)) for f in out.rglob("*") if f.is_file()}
    assert set(manifest.sha256) == written - {"manifest.json"}
    for name, digest in manifest.sha256.items():
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("fmt", ["parquet", "hrm"])
def test_pencilmark_rows_among_81_character_ones_are_one_clear_line(tmp_path, fmt):
    frame = generate(6, seed=9)
    puzzles = frame["puzzle"].to_list()
    marks = format_pencilmarks(candidates_of(parse_puzzles([puzzles[0]]).grids))[0]
    path = tmp_path / "mixed.csv"
    pl.DataFrame({"puzzle": [*puzzles[1:4], marks, *puzzles[4:]]}).write_csv(path)
    out = tmp_path / "out"
    result = cli("split", path, "-o", out, "--format", fmt, "--fractions", FRACTIONS)
    assert result.exit_code == 2
    assert_one_line_error(result.stderr, "row 3 is a pencilmark puzzle")
    assert not out.exists()
