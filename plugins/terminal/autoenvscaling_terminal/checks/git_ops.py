# Checks of the git_ops family. They read the repository with the git command line.
from ._common import *  # the names the rendered file defines above, for the type checker (dropped when rendered)
REPO = APP / "repo"
# git runs programs its configuration names (fsmonitor, hooks, filters, gpg, ...), and the
# repository's configuration is the agent's: the checks read the repository with a configuration
# reduced to its format settings, no system or global configuration and no hooks.
GIT = ["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
       "--no-optional-locks", "-C", str(REPO)]
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0", "HOME": "/nonexistent"}


def _neutralise_repo_config():
    env = dict(os.environ, **GIT_ENV)
    found = run([*GIT, "rev-parse", "--absolute-git-dir"], env=env)
    if found.returncode != 0:
        return
    git_dir = Path(found.stdout.strip())
    config = git_dir / "config"
    kept = run(["git", "config", "--file", str(config), "--get-regexp", r"^(core\.repositoryformatversion|extensions\..*)$"], env=env)
    lines_out = ["[core]", "\trepositoryformatversion = 0"]
    for line in kept.stdout.splitlines():
        key, _, value = line.partition(" ")
        section, _, name = key.partition(".")
        if section == "extensions" and name != "worktreeconfig":
            lines_out += ["[extensions]", f"\t{name} = {value}"]
        elif name == "repositoryformatversion":
            lines_out[1] = f"\trepositoryformatversion = {value}"
    for path in (config, git_dir / "config.worktree"):
        if path.is_symlink() or path.exists():
            path.unlink()
    config.write_text("\n".join(lines_out) + "\n")


try:
    _neutralise_repo_config()
except OSError:
    pass


def git(*args):
    result = run([*GIT, *args], env=dict(os.environ, **GIT_ENV))
    assert result.returncode == 0, f"git {' '.join(args)} failed: {result.stderr[-300:]}"
    return result.stdout


def test_initial_history():
    """The original commits are all still there, in order, at the start of main's history."""
    subjects = git("log", "main", "--reverse", "--format=%s").splitlines()
    assert subjects[: len(TRUTH["subjects"])] == TRUTH["subjects"], "the history of main was rewritten"


def answer_lines():
    return lines(APP / TRUTH["answer"])


def test_culprit_ticket():
    assert answer_lines()[0].strip() == TRUTH["ticket"]


def test_culprit_author():
    got = answer_lines()
    assert len(got) >= 2 and got[1].strip() == TRUTH["author"]


def test_fix_commit():
    subjects = git("log", "main", "--format=%s").splitlines()
    assert subjects[0] == f"Restore {TRUTH['key']}", "HEAD of main is not the fix commit"
    assert len(subjects) == len(TRUTH["subjects"]) + 1, "expected exactly one new commit"
    content = git("show", "main:src/settings.py")
    assert f"{TRUTH['key']} = {TRUTH['good']}\n" in content and f"{TRUTH['key']} = {TRUTH['bad']}\n" not in content


def test_files_restored():
    for path, content in TRUTH["versions"].items():
        assert text(REPO / path) == content, f"{path} does not have its last content"


def test_restore_commit():
    subjects = git("log", "main", "--format=%s").splitlines()
    assert subjects[0] == TRUTH["message"], f"HEAD message is {subjects[0]!r}"
    assert len(subjects) == len(TRUTH["subjects"]) + 1, "expected exactly one new commit"
    changed = sorted(git("show", "--name-only", "--format=", "main").split())
    assert changed == sorted(TRUTH["versions"]), f"the commit changes {changed}"
    for path, content in TRUTH["versions"].items():
        assert git("show", f"main:{path}") == content


def test_shape_restore_tag():
    assert git("rev-parse", f"{TRUTH['tag']}^{{commit}}").strip() == git("rev-parse", "main").strip()
    assert git("show", "--name-only", "--format=", TRUTH["tag"]).split(), "the tag must point at the restore commit"


def test_hotfix_branch_base():
    branch, tag = TRUTH["branch"], TRUTH["tag"]
    assert run([*GIT, "merge-base", "--is-ancestor", tag, branch], env=dict(os.environ, **GIT_ENV)).returncode == 0, f"{branch} does not start at {tag}"
    subjects = git("log", "--format=%s", f"{tag}..{branch}").splitlines()
    assert list(reversed(subjects)) == [f["subject"] for f in TRUTH["fixes"]], f"commits on the branch: {subjects}"
    assert not git("log", "--merges", "--format=%H", f"{tag}..{branch}").strip(), "no merges allowed"


def test_hotfix_contents():
    branch = TRUTH["branch"]
    for fix in TRUTH["fixes"]:
        assert git("show", f"{branch}:{fix['path']}") == fix["content"]
    files = set(git("ls-tree", "-r", "--name-only", branch).split())
    assert not any(f.startswith("src/feature_") for f in files), "unreleased work leaked onto the branch"


def test_shape_hotfix_tag():
    assert git("rev-parse", f"{TRUTH['new_tag']}^{{commit}}").strip() == git("rev-parse", TRUTH["branch"]).strip()


def test_shape_main_checked_out():
    assert git("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert not git("status", "--porcelain").strip(), "the working tree is not clean"
    assert git("rev-parse", TRUTH["branch"]).strip() != git("rev-parse", "main").strip()
