# Checks of the shell_script family: the agent's script runs on inputs it has never seen, as the
# agent-code user (see run_agent above).
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)
import tarfile

own(APP)


def script():
    return need(APP / TRUTH["script"])


def call(*args, stdin=None, cwd=None):
    return run_agent(["bash", str(script()), *args], input=stdin, cwd=cwd, timeout=60)


def test_shape_script_executable():
    path = script()
    assert os.access(path, os.X_OK), f"{path} is not executable"
    assert path.read_text(errors="replace").startswith("#!"), "the script needs a shebang line"


def make_dir(names):
    root = agent_dir()
    for i, name in enumerate(names):
        (root / name).write_text(f"content {i}\n")
    return own(root)


def listing(root):
    return sorted((p.name for p in root.iterdir()), key=lambda s: s.encode())


def test_rename_results():
    for case in TRUTH["cases"][1:] + TRUTH["cases"][:1]:
        if case["skipped"]:
            continue
        root = make_dir(case["names"])
        call(str(root))
        assert listing(root) == case["after"]
        contents = sorted(p.read_text() for p in root.iterdir())
        assert contents == sorted(f"content {i}\n" for i in range(len(case["names"]))), "file contents changed"


def test_rename_dry_run():
    case = TRUTH["cases"][1]
    root = make_dir(case["names"])
    result = call("-n", str(root))
    assert listing(root) == sorted(case["names"], key=lambda s: s.encode()), "a dry run must not rename anything"
    assert [l.rstrip() for l in result.stdout.splitlines() if l.strip()] == [f"{a} -> {b}" for a, b in case["plan"]]


def test_rename_usage_error():
    script()
    result = call()
    assert result.returncode == 2 and result.stderr.strip(), "no argument: expected exit 2 and a usage message"
    result = call("/nonexistent/dir")
    assert result.returncode == 2, "not a directory: expected exit 2"


def test_rename_collisions():
    case = TRUTH["cases"][0]
    assert case["skipped"]
    root = make_dir(case["names"])
    result = call(str(root))
    assert listing(root) == case["after"]
    assert result.returncode == 1, f"expected exit 1 after a skip, got {result.returncode}"
    for name in case["skipped"]:
        assert f"skip: {name}" in result.stderr


def stats_file(case):
    path = agent_dir() / "numbers.txt"
    path.write_text(case["input"])
    return own(path)


def stats_out(result):
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-300:]}"
    return " ".join(result.stdout.split())


def test_stats_output():
    case = TRUTH["cases"][0]
    assert stats_out(call(str(stats_file(case)))) == case["expected"]


def test_stats_column_option():
    for case in TRUTH["cases"][1:]:
        assert stats_out(call("-c", str(case["column"]), str(stats_file(case)))) == case["expected"]


def test_stats_stdin():
    case = TRUTH["cases"][0]
    assert stats_out(call(stdin=case["input"])) == case["expected"]


def test_stats_rejects_garbage():
    case = TRUTH["cases"][0]
    bad = case["input"].splitlines()
    bad.insert(2, "twelve")
    result = call(stdin="\n".join(bad) + "\n")
    assert result.returncode == 2, f"expected exit 2, got {result.returncode}"
    assert "error: line 3: not a number" in result.stderr


def source_tree():
    base = agent_dir()
    src = base / TRUTH["src_name"]
    for rel, content in TRUTH["tree"].items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(content)
    own(base)
    return src, base / "dest"


def members(archive):
    with tarfile.open(archive) as tar:
        return {m.name.rstrip("/"): tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}


def expected_members(include_logs):
    return {f"{TRUTH['src_name']}/{rel}": c for rel, c in TRUTH["tree"].items() if include_logs or not rel.endswith(".log")}


def test_backup_archive():
    src, dest = source_tree()
    label = TRUTH["labels"][0]
    result = call(str(src), str(dest), label)
    archive = dest / f"{TRUTH['src_name']}-{label}.tar.gz"
    assert archive.is_file(), f"{archive.name} was not created (exit {result.returncode}: {result.stderr[-300:]})"
    got = members(archive)
    assert got == {k: v for k, v in expected_members(True).items() if k in got} and got, "archive content is wrong"
    assert set(expected_members(False)) <= set(got), "files are missing from the archive"


def test_backup_prints_path():
    src, dest = source_tree()
    label = TRUTH["labels"][-1]
    result = call(str(src), str(dest), label)
    assert result.stdout.strip() == f"{dest}/{TRUTH['src_name']}-{label}.tar.gz"


def test_backup_rotation():
    src, dest = source_tree()
    dest.mkdir()
    (dest / "notes.txt").write_text("keep me\n")
    own(dest)
    for label in TRUTH["labels"]:
        call(str(src), str(dest), label)
    kept = sorted(p.name for p in dest.glob(f"{TRUTH['src_name']}-*.tar.gz"))
    assert kept == [f"{TRUTH['src_name']}-{l}.tar.gz" for l in TRUTH["labels"][-TRUTH["keep"]:]]
    assert (dest / "notes.txt").read_text() == "keep me\n", "an unrelated file was touched"


def test_backup_excludes_logs():
    src, dest = source_tree()
    call(str(src), str(dest), TRUTH["labels"][0])
    assert members(dest / f"{TRUTH['src_name']}-{TRUTH['labels'][0]}.tar.gz") == expected_members(False)


def test_backup_usage_error():
    script()
    result = call("only-one-arg")
    assert result.returncode == 2 and result.stderr.strip()


def test_backup_checksums():
    src, dest = source_tree()
    for label in TRUTH["labels"][:2]:
        call(str(src), str(dest), label)
    entries = lines(dest / "SHA256SUMS")
    assert len(entries) == 2
    for entry, label in zip(entries, TRUTH["labels"][:2]):
        name = f"{TRUTH['src_name']}-{label}.tar.gz"
        digest, _, listed = entry.partition("  ")
        assert listed == name
        if (dest / name).exists():
            assert digest == sha256(dest / name)
