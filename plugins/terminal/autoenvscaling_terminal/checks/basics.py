# Checks of the basics family: one check per step, each judging the final state that step asks for.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)
import stat


def check_step(step):
    op = step["op"]
    if op == "mkdir":
        assert (APP / step["path"]).is_dir(), f"/app/{step['path']} is not a directory"
    elif op == "write":
        got = text(APP / step["path"]).strip()
        assert got == step["text"], f"/app/{step['path']} holds {got[:80]!r}, expected {step['text']!r}"
    elif op == "touch":
        path = need(APP / step["path"])
        assert path.is_file() and not path.read_bytes().strip(), f"{path} should be an empty file"
    elif op == "copy":
        dest = need(APP / step["dest"])
        assert dest.is_file() and sha256(dest) == TRUTH["inputs"][step["src"]], f"{dest} is not a copy of /app/{step['src']}"
    elif op == "move":
        dest = need(APP / step["dest"])
        assert not (APP / step["src"]).exists(), f"/app/{step['src']} still exists"
        assert dest.is_file() and sha256(dest) == step["sha256"], f"{dest} does not hold the moved file's contents"
    elif op == "symlink":
        link = APP / step["link"]
        assert link.is_symlink(), f"{link} is not a symbolic link"
        assert link.resolve() == (APP / step["target"]).resolve(), f"{link} points elsewhere"
    elif op == "chmod_x":
        mode = need(APP / step["path"]).stat().st_mode
        assert mode & stat.S_IXUSR, f"/app/{step['path']} is not executable (mode {stat.filemode(mode)})"
    elif op == "chmod_private":
        mode = stat.S_IMODE(need(APP / step["path"]).stat().st_mode)
        assert mode == 0o600, f"/app/{step['path']} has mode {mode:o}, expected 600"
    elif op == "append":
        got = [line.rstrip() for line in text(APP / step["path"]).splitlines()]
        want = step["before"] + [step["text"]]
        while got and not got[-1]:
            got.pop()
        assert got == want, f"/app/{step['path']} should be its old lines plus {step['text']!r} at the end"
    elif op == "delete":
        assert not (APP / step["path"]).exists(), f"/app/{step['path']} still exists"
    elif op in ("count_lines", "count_words", "first_line"):
        got = text(APP / step["out"]).strip()
        assert got == step["value"], f"/app/{step['out']} holds {got[:80]!r}, expected {step['value']!r}"
    else:
        raise AssertionError(f"unknown step {op!r}")


def test_step_1():
    check_step(TRUTH["steps"][0])


def test_step_2():
    check_step(TRUTH["steps"][1])


def test_step_3():
    check_step(TRUTH["steps"][2])


def test_step_4():
    check_step(TRUTH["steps"][3])


def test_step_5():
    check_step(TRUTH["steps"][4])


def test_step_6():
    check_step(TRUTH["steps"][5])


def test_step_7():
    check_step(TRUTH["steps"][6])
