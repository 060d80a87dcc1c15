"""LogBundle: several log files read as one stream with `==> name <==` headers."""
from jobs_ingest.adapters import LogBundle


def read_all(bundle, size):
    out = b""
    while chunk := bundle.read(size):
        out += chunk
    return out


def test_files_are_joined_with_headers_whatever_the_read_size(tmp_path):
    (tmp_path / "a.out").write_bytes(b"no newline at end")
    (tmp_path / "b.err").write_bytes(b"Traceback\nValueError: x\n")
    expected = b"==> a.out <==\nno newline at end\n==> b.err <==\nTraceback\nValueError: x\n"
    for size in (1, 3, 7, 1024, -1):
        with LogBundle((tmp_path / "a.out", tmp_path / "b.err")) as bundle:
            assert (read_all(bundle, size) if size > 0 else bundle.read()) == expected


def test_one_file_is_passed_through_unchanged(tmp_path):
    (tmp_path / "a.log").write_bytes(b"last line without newline")
    with LogBundle((tmp_path / "a.log",)) as bundle:
        assert read_all(bundle, 5) == b"last line without newline"
