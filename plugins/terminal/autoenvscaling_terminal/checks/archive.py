# Checks of the archive family.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)
import gzip
import lzma
import tarfile
import zipfile


def tree_digests(root):
    root = need(root)
    return {p.relative_to(root).as_posix(): sha256(p) for p in root.rglob("*") if p.is_file()}


def strip_dot(name):
    return name[2:] if name.startswith("./") else name


def archive_members(path):
    """{member path: sha256} of a tar (any compression) or zip archive; leading './' dropped."""
    path = need(path)
    out = {}
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    out[strip_dot(info.filename)] = hashlib.sha256(zf.read(info)).hexdigest()
        return out
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if m.isfile():
                out[strip_dot(m.name)] = hashlib.sha256(tar.extractfile(m).read()).hexdigest()
    return out


def test_extracted_tree():
    got = tree_digests(APP / TRUTH["dest"])
    missing = sorted(set(TRUTH["extracted"]) - set(got))
    assert not missing, f"not extracted: {missing[:5]}"
    wrong = sorted(p for p, h in TRUTH["extracted"].items() if got[p] != h)
    assert not wrong, f"wrong content: {wrong[:5]}"


def test_selection_members():
    path = APP / TRUTH["out"]
    if path.suffix == ".zip":
        assert zipfile.is_zipfile(need(path)), "the selection must be a zip archive"
    else:
        assert tarfile.is_tarfile(need(path)) and need(path).read_bytes()[:2] == b"\x1f\x8b", "the selection must be a gzip-compressed tar"
    assert sorted(archive_members(path)) == sorted(TRUTH["selected"])


def test_selection_contents():
    got = archive_members(APP / TRUTH["out"])
    assert all(got.get(p) == h for p, h in TRUTH["selected"].items()), "a selected file has the wrong content"


def test_corrupted_list():
    assert lines(APP / TRUTH["report"]) == TRUTH["corrupted"]


def test_clean_archive():
    path = need(APP / TRUTH["clean"])
    assert zipfile.is_zipfile(path), "the clean archive must be a zip"
    members = archive_members(path)
    if TRUTH["clean_manifest"]:
        assert members.pop("SHA256SUMS", None) is not None, "the zip has no SHA256SUMS"
        with zipfile.ZipFile(path) as zf:
            listed = {}
            for line in zf.read("SHA256SUMS").decode().splitlines():
                digest, _, name = line.partition("  ")
                listed[strip_dot(name.lstrip("*"))] = digest
        assert listed == TRUTH["good"], "the new SHA256SUMS does not list exactly the intact files"
    assert members == TRUTH["good"]


def decompress(path):
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else lzma.decompress(raw)


def test_logs_compressed():
    for name, digest in TRUTH["compressed"].items():
        path = need(APP / "logs" / name)
        data = decompress(path)
        assert hashlib.sha256(data).hexdigest() == digest, f"{name} does not decompress to the original log"


def test_shape_uncompressed_removed():
    left = [n for n in TRUTH["originals"] if (APP / "logs" / n).exists()]
    assert not left, f"uncompressed logs left: {left}"
    assert any((APP / "logs" / n).exists() for n in TRUTH["compressed"]), "no compressed log found"


def test_compression_index():
    assert [l.split() for l in lines(APP / "logs" / "INDEX")] == [[n, str(s)] for n, s in TRUTH["index"]]
