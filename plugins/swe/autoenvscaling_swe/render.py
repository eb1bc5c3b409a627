"""An ``Instance`` (a bug in a repository, its fix, and the tests that decide) as a Harbor task.

    task.toml              [metadata.autoenvscaling] provenance, [metadata.swe] the SWE-bench fields
    instruction.md         the issue text and where the repository is
    environment/Dockerfile one preamble for every swe task (python3, git, pytest from PyPI in a
                           directory of its own), then the repository's dependencies (a layer keyed
                           by their content: installed once per repository and commit), pip purged,
                           then the agent's repository
    environment/repo/...   the repository as the agent gets it: buggy, held-back tests removed
    environment/deps/requirements.txt   when the repository declares dependencies
    tests/test.sh          runs swe_verify.py; the reward is 1 when every FAIL_TO_PASS and
                           PASS_TO_PASS test passes (SWE-bench's "resolved")
    tests/swe_verify.py    the verifier (this plugin's verifier/swe_verify.py, verbatim)
    tests/aes_verifier.py  the verifier library swe_verify.py imports (autoenvscaling.verifier)
    tests/swe.json         the test lists, the workdir, the time limit
    tests/repo/...         the original tests and test configuration (the hidden bundle)
    solution/solve.sh      applies the fix (``git apply``)

The image gets a fresh git repository holding only the buggy snapshot: one commit, no remote, no
tags, no reflog, no other objects. Nothing of the original code reaches the image.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from autoenvscaling.api import Task, TaskFile, label_of, package_reader, render_task, verifier_library

DOMAIN = "swe"
WORKDIR = "/app"
# pytest comes from PyPI into a directory of its own (on sys.path through a .pth file, and as
# /usr/local/bin/pytest), never from Debian: python3-pytest pulls in python3-more-itertools, a copy of
# a library someone may want bugs in. pip (and setuptools, which vendors more_itertools, and pip's own
# vendored requests, urllib3, rich, ...) is purged once the repository's dependencies are in: nothing
# in the image is a second copy of popular code under test (the swe-validation gate checks the rest).
PYTEST_HOME = "/opt/aes-pytest"
PYTEST_PINS = "pytest==8.4.2 pluggy==1.6.0 iniconfig==2.1.0 packaging==25.0 pygments==2.19.2"
PREAMBLE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    python3 python3-pip git ca-certificates \\\n"
    "    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
    f"RUN python3 -m pip install --no-cache-dir --target {PYTEST_HOME} {PYTEST_PINS} \\\n"
    f"    && echo {PYTEST_HOME} > /usr/lib/python3/dist-packages/aes-pytest.pth \\\n"
    "    && printf '#!/bin/sh\\nexec python3 -m pytest \"$@\"\\n' > /usr/local/bin/pytest && chmod 755 /usr/local/bin/pytest\n"
)
PURGE_RUN = (
    "RUN DEBIAN_FRONTEND=noninteractive apt-get purge -y --auto-remove python3-pip python3-setuptools python3-wheel \\\n"
    "    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb /root/.cache\n"
)
SNAPSHOT_RUN = (
    "RUN cd /app && git init -q -b main && git add -A \\\n"
    "    && GIT_AUTHOR_DATE='@1700000000 +0000' GIT_COMMITTER_DATE='@1700000000 +0000' \\\n"
    "       git -c user.name=autoenvscaling -c user.email=swe@autoenvscaling.invalid commit -q -m 'Repository snapshot' \\\n"
    "    && rm -rf .git/logs .git/hooks .git/COMMIT_EDITMSG .git/description\n"
)
MIN_VERIFIER_SEC = 60.0


@dataclass(frozen=True)
class Instance:
    """Everything a swe task is made of. ``visible``: the agent's repository; ``bundle``: the
    original tests and configuration the verifier restores; ``patch``: the fix (the oracle);
    ``test_patch``: what restores the held-back tests; ``bug_patch``: the original commit -> the
    agent's repository (the injected bug and the held-back tests removed)."""

    name: str
    repo: str
    origin: str
    base_commit: str
    visible: dict[str, bytes] = field(repr=False)
    bundle: dict[str, bytes] = field(repr=False)
    patch: str = field(repr=False)
    test_patch: str = field(repr=False)
    bug_patch: str = field(repr=False)
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    held_back: list[str] = field(default_factory=list)
    issue: str = ""
    level: int = 1
    strategy: dict[str, Any] = field(default_factory=dict)
    suite_timeout: float = 120.0  # the bound screening enforced; the verifier gets the same
    seed: int | None = None
    family: str | None = None


def instance_name(repo: str, kind: str, level: int, seed: int) -> str:
    """The task name of an instance: the same inputs always give the same name (resume relies on it)."""
    return re.sub(r"[^a-z0-9-]+", "-", f"swe-{repo.lower()}-{kind}-l{level}-s{seed}").strip("-")


package_text = package_reader(__package__)


def requirements(files: dict[str, bytes]) -> list[str]:
    """The repository's declared dependencies: pyproject's [project] dependencies and its test extras,
    else requirements.txt (and requirements-test/-dev.txt). pytest itself comes with the image."""
    reqs: list[str] = []
    if "pyproject.toml" in files:
        try:
            project = tomllib.loads(files["pyproject.toml"].decode()).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            project = {}
        reqs += list(project.get("dependencies", []))
        extras = project.get("optional-dependencies", {})
        for extra in ("test", "tests", "testing"):
            reqs += list(extras.get(extra, []))
    for name in ("requirements.txt", "requirements-test.txt", "requirements-dev.txt", "test-requirements.txt"):
        if name in files and not reqs:
            reqs += [line.strip() for line in files[name].decode(errors="replace").splitlines()
                     if line.strip() and not line.lstrip().startswith(("#", "-"))]
    return sorted({r for r in reqs if not re.match(r"^pytest\b(?![-_])", r)})


def dockerfile(reqs: list[str]) -> str:
    lines = [PREAMBLE.rstrip("\n")]
    if reqs:
        lines += ["COPY deps/ /tmp/aes-deps/",
                  "RUN python3 -m pip install --break-system-packages --no-cache-dir -r /tmp/aes-deps/requirements.txt"
                  " && rm -rf /tmp/aes-deps /root/.cache"]
    lines += [PURGE_RUN.rstrip("\n"), "WORKDIR /app", "COPY repo/ /app/", SNAPSHOT_RUN.rstrip("\n")]
    return "\n".join(lines) + "\n"


def environment_files(visible: dict[str, bytes], reqs: list[str]) -> dict[str, bytes | str | TaskFile]:
    files: dict[str, bytes | str | TaskFile] = {"environment/Dockerfile": dockerfile(reqs)}
    if reqs:
        files["environment/deps/requirements.txt"] = "\n".join(reqs) + "\n"
    for rel, data in visible.items():
        files[f"environment/repo/{rel}"] = TaskFile(data=data, executable=rel.endswith(".sh"))
    return files


def instruction(inst: Instance) -> str:
    return (f"{inst.issue.strip()}\n\n---\n\nThe repository `{inst.repo}` is checked out at `{WORKDIR}`. "
            "Change its code so that the behaviour described above is fixed. The repository's own tests may "
            "not cover it; hidden tests will check the fix and the rest of the library's behaviour. "
            "Do not modify the tests.\n")


def render(inst: Instance) -> Task:
    reqs = requirements(inst.visible)
    # The suite's time bound (screening admits only repositories whose clean suite runs in a quarter of
    # it), at least a minute. Fixed per repository, never measured per task: the same seed gives the
    # same task on a fast machine and a slow one.
    timeout = max(MIN_VERIFIER_SEC, float(inst.suite_timeout))
    spec = {"workdir": WORKDIR, "bundle": "repo", "fail_to_pass": inst.fail_to_pass, "pass_to_pass": inst.pass_to_pass,
            "timeout_sec": timeout}
    files = environment_files(inst.visible, reqs)
    files.update({
        "tests/test.sh": package_text("verifier", "test.sh"),
        "tests/swe_verify.py": package_text("verifier", "swe_verify.py"),
        **{f"tests/{n}": text for n, text in verifier_library().items()},  # swe_verify.py's library
        "tests/swe.json": json.dumps(spec, indent=1) + "\n",
        "solution/solve.sh": ("#!/bin/bash\n# Reference solution: the fix as a patch.\nset -euo pipefail\ncd /app\n"
                              "git apply --whitespace=nowarn <<'AUTOENVSCALING_PATCH'\n" + inst.patch
                              + "AUTOENVSCALING_PATCH\n"),
    })
    files.update({f"tests/repo/{rel}": data for rel, data in inst.bundle.items()})
    label = label_of(inst.level)
    kind = inst.strategy.get("kind", "mutation")
    # The repository's tests the agent has as they are: the verifier restores them, they are no secret.
    public = sorted(f"tests/repo/{p}" for p, d in inst.bundle.items() if inst.visible.get(p) == d)
    return render_task(
        domain=DOMAIN, family=inst.family or inst.repo, seed=inst.seed, difficulty=label, name=inst.name,
        instruction=instruction(inst), description=f"fix a bug in {inst.repo} ({kind}, {label})", files=files,
        tags=["swe", "bug-fix", kind], keywords=["swe", "bug-fix", "python", inst.repo],
        metadata={"swe": {"instance_id": f"{inst.repo}__{inst.name}", "repo": inst.repo, "origin": inst.origin,
                          "base_commit": inst.base_commit, "FAIL_TO_PASS": inst.fail_to_pass,
                          "PASS_TO_PASS": inst.pass_to_pass, "held_back": inst.held_back}},
        # The verifier sees the image as built plus the agent's repository, nothing else the agent changed.
        verifier={"timeout_sec": timeout + 60, "outputs": [WORKDIR]},
        agent={"timeout_sec": 900.0 + 300.0 * max(1, inst.level)},
        environment={"build_timeout_sec": 900.0, "cpus": 1, "memory_mb": 2048, "storage_mb": 4096, "workdir": WORKDIR},
        parameters={"repo": inst.repo, "origin": inst.origin, "base_commit": inst.base_commit, "level": inst.level,
                    "strategy": inst.strategy},
        public_files=public)


def swe_fields(task: Task) -> dict[str, Any]:
    """The [metadata.swe] table of a swe task ({} for other tasks)."""
    return dict(task.config.metadata.get("swe", {}))


def read_patch(task: Task) -> str:
    """The fix a task's solve.sh applies."""
    text = task.files["solution/solve.sh"].text
    start = text.index("<<'AUTOENVSCALING_PATCH'\n") + len("<<'AUTOENVSCALING_PATCH'\n")
    return text[start:text.rindex("AUTOENVSCALING_PATCH\n")]
