"""Fuzzing Dockerfiles and their build context through what reads them: the lint gate
(``lint_findings``, gate 1 of every validation) and the bwrap backend's build planning
(``plan_build``: every refusal happens there, before anything is built). Each either answers or
raises one BuildError line; neither may crash on a Dockerfile, a .dockerignore or a COPY source."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from autoenvscaling.errors import BuildError
from autoenvscaling.gates.lint import lint_findings
from autoenvscaling.sandbox.bwrap_build import plan_build
from autoenvscaling.sandbox.dockerfile import parse_dockerfile
from autoenvscaling.tasks import Task

from .conftest import Fuzz
from .strategies import any_text, deep, huge_text, nasty_strings, shellish, text_like, words

KEYWORDS = ["FROM", "RUN", "COPY", "ADD", "ARG", "ENV", "LABEL", "USER", "WORKDIR", "SHELL", "CMD", "ENTRYPOINT",
            "EXPOSE", "HEALTHCHECK", "VOLUME", "STOPSIGNAL", "ONBUILD", "MAINTAINER", "from", "Run", "BOGUS", "#", "\\"]
IMAGES = ["ubuntu:24.04", "debian:bookworm", "python:3.12-slim", "scratch", "alpine", "$BASE", "${IMG:-ubuntu}",
          "base AS build", "build", "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624", "a@sha256:00"]
FLAGS = ["--from=build", "--chown=1:1", "--chmod=755", "--mount=type=cache,target=/x", "--link", "--", "--=",
         "--platform=linux/amd64", "--network=none", "--interval=1s", "--exclude=*.py"]
args = st.one_of(shellish, words, nasty_strings, st.sampled_from(IMAGES),
                 st.lists(text_like, max_size=4).map(json.dumps),
                 st.sampled_from(['["/bin/bash", "-c"]', '["a", 1]', "[", '["unterminated', "A=1 B=2", "A 1",
                                  "a b c", "'unterminated", '"unterminated', "${A:-${B:+x}}", "$", "${", "\\$X",
                                  "<<EOF", "<<-'END' /x", "<<EOF cat > /a", ". /app", "* /app/", "[z-a] /x", "../x /y",
                                  "/abs /y", "http://example.com/x /y", "git@github.com:a/b /y", "a?b /c"]))


@st.composite
def instruction(draw: st.DrawFn) -> str:
    keyword = draw(st.sampled_from(KEYWORDS))
    flags = " ".join(draw(st.lists(st.sampled_from(FLAGS), max_size=2)))
    line = f"{keyword} {flags} {draw(args)}".rstrip()
    if draw(st.booleans()):  # a continuation, or a heredoc body (closed or not)
        line += draw(st.sampled_from(["\\\n  more", "\\\n# comment\n  more", "\\", "\nbody\nEOF", "\nbody",
                                      "\n\tbody\n\tEND", " \\\n"]))
    return line


@st.composite
def dockerfiles(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["lines", "lines", "lines", "junk", "huge", "deep"]))
    if kind == "junk":
        return draw(any_text)
    if kind == "huge":
        return "FROM ubuntu:24.04\nRUN " + draw(huge_text(1 << 18)) + "\n"
    if kind == "deep":
        return "FROM ubuntu:24.04\nCMD " + draw(deep) + "\n"
    head = draw(st.sampled_from(["", "# escape=`\n", "# escape=\\\n", "# syntax=docker/dockerfile:1\n", "\ufeff"]))
    lines = draw(st.lists(instruction(), max_size=8))
    if draw(st.booleans()):
        lines.insert(0, f"FROM {draw(st.sampled_from(IMAGES))}")
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    return head + newline.join(lines) + draw(st.sampled_from(["", "\n", "\\", "\\\n"]))


context_files = st.dictionaries(
    st.one_of(words.filter(bool), nasty_strings.filter(lambda s: s and not s.startswith("/") and ".." not in s)),
    st.one_of(st.binary(max_size=64), st.just(b"x")), max_size=4)
dockerignores = st.lists(st.one_of(words, nasty_strings, st.sampled_from(["[", "[]", "[!]", "[z-a]", "[\\]", "!x",
                                                                           "**/", "*", "#c", "!", "a[b"])),
                         max_size=5).map("\n".join)


@st.composite
def docker_tasks(draw: st.DrawFn) -> Task:
    files: dict[str, Any] = {f"environment/{k}": v for k, v in draw(context_files).items()}
    files["environment/Dockerfile"] = draw(dockerfiles())
    if draw(st.booleans()):
        files["environment/.dockerignore"] = draw(dockerignores)
    files["tests/test.sh"] = "echo 1 > /logs/verifier/reward.txt\n"
    files["solution/solve.sh"] = "true\n"
    # Bytes, as read from disk (Task.create would encode a str, and a lone surrogate has no UTF-8 form).
    return Task.create("org/fuzz", {"task": {"name": "org/fuzz"}}, "do it",
                       {k: v.encode("utf-8", "surrogatepass") if isinstance(v, str) else v for k, v in files.items()})


def test_dockerfile_parsing(fuzz: Fuzz) -> None:
    @fuzz.given(dockerfiles())
    def check(text: str) -> None:
        try:
            for inst in parse_dockerfile(text):
                inst.exec_form()
                inst.summary()
        except BuildError as exc:
            assert "\n" not in exc.message

    check()


def test_lint_never_crashes(fuzz: Fuzz) -> None:
    @fuzz.given(docker_tasks())
    def check(task: Task) -> None:
        for finding in lint_findings(task, backend="bwrap"):
            assert finding.text and "\n" not in finding.text, finding

    check()


def test_bwrap_build_planning(fuzz: Fuzz) -> None:
    @fuzz.given(docker_tasks())
    def check(task: Task) -> None:
        try:
            plan_build(task)
        except BuildError as exc:  # UnsupportedDockerfile is one
            assert exc.message and "\n" not in exc.message, exc.message

    check()
