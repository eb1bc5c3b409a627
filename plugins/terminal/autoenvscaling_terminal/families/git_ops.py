"""Git repository operations on a repository whose history is built at image build time.

The setup script commits generated file snapshots with fixed authors and dates, so the history is
the same on every build. Ground truth is what the generator wrote (ticket ids, authors, file
contents), never a commit hash.

Kinds:
- ``find_commit``: which commit introduced a bad setting (ticket id; author; the *latest*
  introduction after a revert; then fix it in a new commit without rewriting history).
- ``restore_file``: bring back a deleted file's last version (commit it with a given message; a second
  file; tag the result).
- ``branch_fix``: branch from a release tag and cherry-pick fixes from main (tag the hotfix; two
  fixes in order; leave main checked out).
"""

from __future__ import annotations

import random
import shlex
from dataclasses import dataclass, field

from . import vocab
from .base import Draft, Kind, Wording, grow


@dataclass
class Commit:
    message: str
    author: tuple[str, str]
    files: dict[str, str | None] = field(default_factory=dict)  # None deletes the file
    tag: str | None = None


class History:
    """Builds the commits and the setup script that replays them; tracks the tree as it goes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.commits: list[Commit] = []
        self.tree: dict[str, str] = {}
        self.day = rng.randint(0, 200)
        self.authors = [(f"{f.title()} {s.title()}", f"{f}.{s}@{rng.choice(vocab.EMAIL_DOMAINS)}")
                        for f, s in zip(rng.sample(vocab.FIRST_NAMES, 5), rng.sample(vocab.SURNAMES, 5))]
        self.project = rng.choice(["billing", "webshop", "scheduler", "gateway", "reports"])

    def commit(self, subject: str, files: dict[str, str | None], tag: str | None = None) -> Commit:
        # git refuses an empty commit, so a generator bug here would surface only as a failed build
        if all(self.tree.get(path) == content for path, content in files.items()):
            raise ValueError(f"commit {subject!r} changes nothing")
        ticket = f"{self.rng.choice(['OPS', 'DEV', 'BUG', 'PLAT', 'INFRA'])}-{self.rng.randint(100, 9999)}"
        c = Commit(message=f"[{ticket}] {subject}", author=self.rng.choice(self.authors), files=files, tag=tag)
        for path, content in files.items():
            if content is None:
                self.tree.pop(path, None)
            else:
                self.tree[path] = content
        self.commits.append(c)
        return c

    def noise(self, count: int) -> None:
        """Unrelated commits: docs, new modules, small edits."""
        for _ in range(count):
            what = self.rng.random()
            n = len(self.commits)  # in every file a noise commit writes, so it always changes the tree
            if what < 0.4:
                path = f"src/{self.rng.choice(vocab.WORDS)}_{n}.py"
                self.commit(f"Add {path.rsplit('/', 1)[1][:-3]} helper", {path: f'"""{self.rng.choice(vocab.PROSE)}"""\n\n\ndef run():\n    return {self.rng.randint(1, 100)}\n'})
            elif what < 0.7:
                self.commit("Update README", {"README.md": f"# {self.project}\n\nRevision {n}.\n\n" + "\n".join(self.rng.sample(vocab.PROSE, 3)) + "\n"})
            else:
                path = f"docs/{self.rng.choice(vocab.FILE_STEMS)}.md"
                self.commit(f"Document {path.rsplit('/', 1)[1][:-3]}", {path: f"{self.rng.choice(vocab.PROSE)}\n\n(rev {n})\n"})

    def setup_script(self) -> str:
        lines = ["export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp/setup", "git init -q -b main repo", "cd repo",
                 "git config user.name 'Repo Maintainer'", "git config user.email 'maintainer@example.test'"]
        day = self.day
        for i, c in enumerate(self.commits):
            day += 1 + i % 3  # one commit every few days, same dates on every build
            stamp = f"@{1704099600 + day * 86400 + i * 97} +0000"
            for path, content in c.files.items():
                if content is None:
                    lines.append(f"git rm -q -- {shlex.quote(path)}")
                else:
                    if "/" in path:
                        lines.append(f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])}")
                    lines.append(f"cat > {shlex.quote(path)} <<'AES_EOF'\n{content}AES_EOF")
                    lines.append(f"git add -- {shlex.quote(path)}")
            env = (f"GIT_AUTHOR_NAME={shlex.quote(c.author[0])} GIT_AUTHOR_EMAIL={shlex.quote(c.author[1])} "
                   f"GIT_AUTHOR_DATE='{stamp}' GIT_COMMITTER_DATE='{stamp}'")
            lines.append(f"{env} git commit -q -m {shlex.quote(c.message)}")
            if c.tag:
                lines.append(f"git tag {c.tag}")
        return "\n".join(lines)

    def subjects(self) -> list[str]:
        return [c.message for c in self.commits]


def _settings(values: dict[str, str]) -> str:
    return '"""Runtime settings."""\n\n' + "".join(f"{k} = {v}\n" for k, v in values.items())


def build_find_commit(rng: random.Random, level: int) -> Draft:
    h = History(rng)
    key = rng.choice(["MAX_RETRIES", "POOL_SIZE", "TIMEOUT_SECONDS", "BATCH_LIMIT", "WORKERS"])
    good = str(rng.randint(3, 60))
    bad = rng.choice(["0", "-1", "None"])
    values = {k: str(rng.randint(1, 100)) for k in rng.sample(["CACHE_TTL", "PORT", "LOG_LEVEL_NUM", "PAGE_SIZE", "QUEUE_DEPTH"], 3)}
    values[key] = good
    h.commit("Initial settings", {"src/settings.py": _settings(values), "README.md": f"# {h.project}\n"})
    n_noise = grow(level, 4, 1.6)
    h.noise(n_noise // 2)
    culprit: Commit
    if level >= 3:  # introduced, reverted, introduced again: the latest introduction is the answer
        h.commit(f"Tune {key.lower()}", {"src/settings.py": _settings({**values, key: bad})})
        h.noise(1)
        h.commit(f"Revert {key.lower()} change", {"src/settings.py": _settings(values)})
        h.noise(1)
    other = [k for k in values if k != key][0]
    values_bad = {**values, key: bad, other: str(int(values[other]) + 1)}
    culprit = h.commit(rng.choice([f"Adjust {other.lower()} and {key.lower()}", "Performance tweaks", "Config cleanup"]),
                       {"src/settings.py": _settings(values_bad)})
    h.noise(n_noise - n_noise // 2)
    line = f"{key} = {bad}"
    ticket = culprit.message[1:].split("]", 1)[0]
    answer = rng.choice(["answer.txt", "culprit.txt", "investigation/result.txt"])
    truth: dict = {"answer": answer, "ticket": ticket, "author": culprit.author[1], "subjects": h.subjects(), "key": key, "good": good, "bad": bad}
    checks = ["test_initial_history", "test_culprit_ticket"]
    w = Wording(rng)
    intro = w.intro([f"In the git repository `/app/repo`, the line `{line}` in `src/settings.py` is breaking production.",
                     f"Someone set `{line}` in `/app/repo/src/settings.py` and the service is now misbehaving."])
    ask = w.pick(["Find the commit that introduced it and write that commit's ticket id (the `XXX-1234` in brackets at the start of its message) as the first line of `/app/{a}`.",
                  "Track down which commit put that line there; put its ticket id — the bracketed `ABC-123` prefix of the commit message — on line 1 of `/app/{a}`."], a=answer)
    details: list[str] = []
    if level >= 2:
        w.require(checks, details, "test_culprit_author", ["Write the commit author's e-mail address on the second line.", "Line 2 of the same file: the e-mail of that commit's author."])
    if level >= 3:
        details.append(w.pick(["The value was changed back and forth before; I want the commit responsible for the current state (the most recent one that introduced the line).",
                               "Careful: the line was added once, reverted, then added again — report the latest introduction."]))
    if level >= 4:
        w.require(checks, details, "test_fix_commit", [f"Then fix it: set `{key} = {good}` again in a new commit on `main` with the message `Restore {key}`. Do not rewrite existing history.",
                                                       f"After that, restore `{key} = {good}` with a new commit (message exactly `Restore {key}`) on top of `main`; no rebasing or amending."])
    else:
        details.append(w.pick(["Do not change the repository.", "Leave the repository untouched."]))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = [f"mkdir -p \"$(dirname /app/{answer})\"", "cd /app/repo",
           f"commit=$(git log -S'{line}' --format=%H -- src/settings.py | head -n 1)",
           f"git log -1 --format=%s \"$commit\" | sed -E 's/^\\[([A-Z]+-[0-9]+)\\].*/\\1/' > /app/{answer}"]
    if level >= 2:
        sol.append(f"git log -1 --format=%ae \"$commit\" >> /app/{answer}")
    if level >= 4:
        sol += [f"sed -i 's/^{key} = .*/{key} = {good}/' src/settings.py",
                f"git -c user.name=Oracle -c user.email=oracle@example.test commit -q -am 'Restore {key}'"]
    return Draft(kind="find_commit", outputs=["repo", answer], instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"commits": len(h.commits), "reintroduced": level >= 3, "author": level >= 2, "fix": level >= 4},
                 setup=h.setup_script(), tags=["git", "history"])


def build_restore(rng: random.Random, level: int) -> Draft:
    h = History(rng)
    n_noise = grow(level, 4, 1.6)
    targets = [rng.choice(["config/limits.yaml", "docs/ONCALL.md", "scripts/deploy.sh", "config/feature_flags.ini"])]
    if level >= 3:
        targets.append(rng.choice([p for p in ["templates/email.html", "config/cron.txt", "docs/RUNBOOK.md"] if p not in targets]))
    versions: dict[str, str] = {}
    h.commit("Initial import", {"README.md": f"# {h.project}\n", **{t: f"# {t}\nversion: 1\n" for t in targets}})
    h.noise(n_noise // 2)
    for t in targets:
        content = f"# {t}\nversion: 1\n"
        for v in range(2, 2 + (rng.randint(1, 3) if level >= 2 else 0)):  # later edits: the last one counts
            content = f"# {t}\nversion: {v}\n" + "".join(f"{rng.choice(vocab.WORDS)}: {rng.randint(1, 500)}\n" for _ in range(3))
            h.commit(f"Update {t.rsplit('/', 1)[1]}", {t: content})
            h.noise(1)
        versions[t] = content
    for t in targets:
        h.commit(rng.choice(["Remove unused files", f"Drop {t.rsplit('/', 1)[1]}", "Spring cleaning"]), {t: None})
        h.noise(1)
    h.noise(n_noise - n_noise // 2)
    message = f"Restore {targets[0]}" if len(targets) == 1 else "Restore deleted files"
    tag = f"v{rng.randint(1, 3)}.{rng.randint(0, 9)}.{rng.randint(1, 9)}" if level >= 4 else None
    truth: dict = {"subjects": h.subjects(), "versions": versions, "message": message if level >= 1 else None, "tag": tag}
    checks = ["test_initial_history", "test_files_restored"] + (["test_restore_commit"] if level >= 1 else []) + (["test_shape_restore_tag"] if tag else [])
    w = Wording(rng)
    listed = " and ".join(f"`{t}`" for t in targets)
    intro = w.intro([f"{listed} {'was' if len(targets) == 1 else 'were'} deleted from the git repository `/app/repo` some time ago, but we still need {'it' if len(targets) == 1 else 'them'}.",
                     f"We removed {listed} from `/app/repo` by mistake a while back."])
    ask = w.pick(["Bring {it} back into the working tree at the same path{s}, with the content {it} had just before deletion.",
                  "Restore {it} to {where} with {its} last content before the deletion."],
                 it="it" if len(targets) == 1 else "them", s="" if len(targets) == 1 else "s", where="its original path" if len(targets) == 1 else "their original paths",
                 its="its" if len(targets) == 1 else "their")
    details: list[str] = []
    w.describe_if(details, [
        (level >= 1, ["Commit the restoration on `main` as a single new commit with the message `{m}`.",
                      "Record it as one new commit on `main`, message exactly `{m}`."]),
        (level >= 1, ["Do not rewrite history (no amend, rebase or reset of existing commits).", "Existing commits must stay as they are."]),
        (level >= 2, ["{T} was edited several times before {it} was deleted; the latest version is the one we want.",
                      "Note that there were multiple revisions; use the last one."]),
        (tag, ["Tag the new commit `{t}` (a lightweight or annotated tag).", "Put the tag `{t}` on your restore commit."]),
    ], m=message, T="The file" if len(targets) == 1 else "Each file", it="it", t=tag)
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = ["cd /app/repo"]
    for t in targets:
        sol += [f"deleted=$(git log --diff-filter=D --format=%H -1 -- {t})", f"git checkout \"$deleted^\" -- {t}"]
    sol.append(f"git -c user.name=Oracle -c user.email=oracle@example.test commit -q -m '{message}'" if level >= 1
               else "git reset -q")
    if tag:
        sol.append(f"git tag {tag}")
    return Draft(kind="restore_file", outputs=["repo"], instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"commits": len(h.commits), "files": len(targets), "commit": level >= 1, "tag": bool(tag)},
                 setup=h.setup_script(), tags=["git", "history", "restore"])


def build_branch_fix(rng: random.Random, level: int) -> Draft:
    h = History(rng)
    n_noise = grow(level, 3, 1.6)
    tag = f"v{rng.randint(1, 4)}.{rng.randint(0, 9)}.0"
    app = {"src/app.py": "def handler(x):\n    return x\n", "src/util.py": "def clamp(v, lo, hi):\n    return max(lo, min(hi, v))\n"}
    h.commit("Initial version", {**app, "README.md": f"# {h.project}\n"})
    h.noise(n_noise // 2)
    h.commit(f"Release {tag}", {"VERSION": tag[1:] + "\n"}, tag=tag)
    n_fixes = 2 if level >= 3 else 1
    fixes = []
    for i in range(n_fixes):
        h.commit(rng.choice(["Add experimental feature", "Refactor internals", "WIP: new API"]),
                 {f"src/feature_{i}.py": f"ENABLED = False  # {rng.choice(vocab.WORDS)}\n"})
        path = "src/app.py" if i == 0 else "src/util.py"
        fixed = {"src/app.py": "def handler(x):\n    if x is None:\n        return 0\n    return x\n",
                 "src/util.py": "def clamp(v, lo, hi):\n    if lo > hi:\n        lo, hi = hi, lo\n    return max(lo, min(hi, v))\n"}[path]
        subject = {"src/app.py": "Fix crash on empty input", "src/util.py": "Fix clamp with swapped bounds"}[path]
        c = h.commit(subject, {path: fixed})
        fixes.append({"subject": c.message, "path": path, "content": fixed})
        h.noise(1)
    h.noise(n_noise - n_noise // 2)
    major, minor = tag[1:].split(".")[:2]
    branch = f"hotfix/{major}.{minor}.x"
    new_tag = f"v{major}.{minor}.1" if level >= 2 else None
    truth = {"subjects": h.subjects(), "tag": tag, "branch": branch, "fixes": fixes, "new_tag": new_tag, "back_on_main": level >= 4,
             "base_files": {**app}}
    checks = ["test_initial_history", "test_hotfix_branch_base", "test_hotfix_contents"] + (["test_shape_hotfix_tag"] if new_tag else []) + (["test_shape_main_checked_out"] if level >= 4 else [])
    w = Wording(rng)
    subjects = " and ".join(f"`{f['subject']}`" for f in fixes)
    intro = w.intro([f"`/app/repo` is a git repository; release `{tag}` is tagged there, and `main` has moved on since.",
                     f"Customers run `{tag}` (a tag in `/app/repo`), but `main` already contains unreleased work."])
    ask = w.pick(["Create a branch `{b}` starting at the tag `{t}` and cherry-pick onto it the fix commit{s} {subj} from `main`.",
                  "Make a hotfix branch named `{b}` from `{t}` that contains exactly the commit{s} {subj} from `main` on top of the tag."],
                 b=branch, t=tag, s="s" if n_fixes > 1 else "", subj=subjects)
    details = [w.pick(["Nothing else from `main` may end up on the branch (no other commits, no merges).", "The branch must not contain any other commit from `main` or any merge."])]
    w.describe_if(details, [
        (n_fixes > 1, ["Apply the fixes in the order they were made on `main`.", "Keep the original order of the two fixes."]),
        (new_tag, ["Tag the tip of the branch `{n}`.", "Finally tag the branch head as `{n}`."]),
        (level >= 4, ["When you are done, check out `main` again with a clean working tree.", "Leave the repository on `main`, with no uncommitted changes."]),
    ], n=new_tag)
    details.append(w.pick(["Do not modify `main` or the existing tags.", "`main` and `{t}` must not change."], t=tag))
    instruction = w.compose(intro=intro, ask=ask, details=details)
    sol = ["cd /app/repo", f"git checkout -q -b {branch} {tag}"]
    for f in fixes:
        sol += [f"pick=$(git log main --format='%H %s' | grep -F {shlex.quote(f['subject'])} | head -n 1 | cut -d' ' -f1)",
                "git -c user.name=Oracle -c user.email=oracle@example.test cherry-pick \"$pick\" > /dev/null"]
    if new_tag:
        sol.append(f"git tag {new_tag}")
    if level >= 4:
        sol.append("git checkout -q main")
    return Draft(kind="branch_fix", outputs=["repo"], instruction=instruction, files={}, truth=truth, checks=checks, solution="\n".join(sol),
                 parameters={"commits": len(h.commits), "fixes": n_fixes, "tag": bool(new_tag), "back_on_main": level >= 4},
                 setup=h.setup_script(), tags=["git", "branches", "cherry-pick"])


KINDS = [Kind("find_commit", build_find_commit), Kind("restore_file", build_restore), Kind("branch_fix", build_branch_fix)]
