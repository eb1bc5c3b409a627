"""core/archive.py: the tars files travel in, built and read in one place."""

from __future__ import annotations

import io
import tarfile

import pytest

from autoenvscaling.archive import extract_tar, first_file, make_tar, symlink_tar


def _members(data: bytes) -> list[tuple[str, bytes, int]]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return [(m.name, m.type, m.mode) for m in tar]


def test_make_tar_modes_order_and_dirs():
    data = make_tar({"b/run.sh": b"echo", "a.txt": b"x", "b/c/tool": (b"y", True)}, dirs=["empty"])
    assert _members(data) == [
        ("empty", tarfile.DIRTYPE, 0o755),
        ("a.txt", tarfile.REGTYPE, 0o644),
        ("b", tarfile.DIRTYPE, 0o755),
        ("b/c", tarfile.DIRTYPE, 0o755),
        ("b/c/tool", tarfile.REGTYPE, 0o755),
        ("b/run.sh", tarfile.REGTYPE, 0o755),  # a .sh file is executable unless told otherwise
    ]
    with pytest.raises(ValueError):
        make_tar({"../out": b""})


def test_reading_back(tmp_path):
    data = make_tar({"d/f.txt": b"hello"})
    extract_tar(data, tmp_path)
    assert (tmp_path / "d/f.txt").read_bytes() == b"hello"
    assert first_file(make_tar({"f": b"abc"}), limit=3) == b"abc"
    assert first_file(make_tar({"f": b"abc"}), limit=2) is None
    assert first_file(symlink_tar("link", "/etc/passwd"), limit=100) is None

    def refuse(member: tarfile.TarInfo) -> None:
        if member.issym():
            raise ValueError(member.name)

    with pytest.raises(ValueError, match="link"):
        extract_tar(symlink_tar("link", "target"), tmp_path / "out", check=refuse)
    assert not (tmp_path / "out").exists()
