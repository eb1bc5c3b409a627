# Checks of the file_search family.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)


def collected():
    root = need(APP / TRUTH["dest"])
    return {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}


def test_collected_files():
    """Exactly the matching files, with their contents: copying the whole tree is not a selection."""
    got = collected()
    for rel, digest in TRUTH["expected"].items():
        assert rel in got, f"{rel} was not copied"
        assert sha256(got[rel]) == digest, f"{rel} has the wrong content"
    manifest = TRUTH.get("manifest")
    extra = sorted(set(got) - set(TRUTH["expected"]) - ({manifest} if manifest else set()))
    assert not extra, f"unexpected files: {extra[:5]}"


def test_manifest():
    assert lines(APP / TRUTH["manifest"]) == sorted(TRUTH["expected"], key=lambda s: s.encode())


def test_junk_removed():
    left = [rel for rel in TRUTH["junk"] if (APP / "work" / rel).exists()]
    assert not left, f"still present: {left[:5]}"


def test_empty_dirs_removed():
    assert (APP / "work").is_dir()
    left = [d for d in TRUTH["empty_dirs"] if (APP / "work" / d).exists()]
    assert not left, f"directories left behind: {left}"


def test_cleanup_report():
    assert lines(APP / TRUTH["report"]) == sorted(TRUTH["junk"], key=lambda s: s.encode())


def groups_reported():
    data = load_json(APP / TRUTH["report"])
    assert isinstance(data, list), "the report must be a JSON array"
    return data


def test_duplicate_groups():
    got = sorted(sorted(g, key=lambda s: s.encode()) for g in groups_reported())
    assert got == TRUTH["groups"]


def test_duplicates_removed():
    groups_reported()
    for group in TRUTH["groups"]:
        assert (APP / "photos" / group[0]).is_file(), f"{group[0]} (the copy to keep) is missing"
        left = [p for p in group[1:] if (APP / "photos" / p).exists()]
        assert not left, f"duplicates left: {left}"
