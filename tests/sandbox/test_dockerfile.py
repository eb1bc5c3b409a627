"""The Dockerfile subset: parsing, variable handling, build context rules and the refusals (no build
runs here; tests/sandbox/test_bwrap_build.py builds)."""

from __future__ import annotations

import pytest
from autoenvscaling.errors import BuildError, UnsupportedDockerfile
from autoenvscaling.sandbox.bwrap_build import plan_build
from autoenvscaling.sandbox.dockerfile import expand_vars, parse_dockerfile, words
from autoenvscaling.sandbox.isolation import DEFAULT_PATH

from .conftest import make_task


def test_parse_continuations_comments_flags_and_heredocs():
    text = (
        "# syntax=docker/dockerfile:1\n"
        "FROM --platform=linux/amd64 ubuntu:24.04 AS base\n"
        "RUN apt-get update && \\\n"
        "    # a comment inside the continuation\n"
        "\n"
        "    apt-get install -y tree\n"
        "copy --chmod=755 a b /dst/\n"
        "RUN <<EOF\n"
        "echo one\n"
        "EOF\n"
        "COPY <<-'CONF' /etc/app.conf\n"
        "\tkey=$NOT_EXPANDED\n"
        "\tCONF\n"
    )
    inst = parse_dockerfile(text)
    assert [i.keyword for i in inst] == ["FROM", "RUN", "COPY", "RUN", "COPY"]
    assert inst[0].flag == {"platform": "linux/amd64"} and inst[0].args == "ubuntu:24.04 AS base"
    assert inst[1].args == "apt-get update &&     apt-get install -y tree" and inst[1].line == 3
    assert inst[2].flag == {"chmod": "755"} and inst[2].args == "a b /dst/"
    assert inst[3].heredocs[0].body == "echo one\n" and inst[3].heredocs[0].expand
    conf = inst[4].heredocs[0]
    assert (conf.name, conf.expand, conf.strip_tabs) == ("CONF", False, True)
    assert parse_dockerfile("# escape=`\nFROM debian\nRUN echo a `\n  b\n")[1].args == "echo a   b"


def test_words_and_variables():
    env = {"A": "1", "EMPTY": "", "SP": "x y"}
    assert expand_vars("$A ${A} ${MISSING:-d} ${EMPTY:-e} ${EMPTY-f} ${A:+set} ${MISSING:+no} \\$A", env) == \
        "1 1 d e  set  $A"
    assert words("a\\ b \"q $A\" 'lit $A' $SP \"\\$A\"", env) == ["a b", "q 1", "lit $A", "x y", "$A"]


def test_plan_resolves_args_env_workdir_and_context():
    task = make_task(
        "ARG BASE=ubuntu:24.04\nFROM $BASE\nARG BASE\nARG VER=1.2\nARG TARGETARCH\n"
        "ENV APP=/opt/app NAME=\"my app\" \\\n    PATH=/opt/app/bin:$PATH\n"
        "WORKDIR $APP\nWORKDIR sub\nCOPY src/ ./\nCOPY *.txt conf/\nUSER ${VER}\nLABEL a=b\nEXPOSE 80/tcp\n"
        "CMD [\"python3\", \"-m\", \"app\"]\n",
        files={"environment/src/main.py": "print(1)\n", "environment/src/pkg/x.py": "",
               "environment/a.txt": "a", "environment/b.txt": "b", "environment/secret.key": "k",
               "environment/.dockerignore": "*.key\n"})
    plan = plan_build(task)
    assert (plan.image, plan.base) == ("ubuntu:24.04", "ubuntu-on-trixie")
    assert plan.env == {"APP": "/opt/app", "NAME": "my app", "PATH": f"/opt/app/bin:{DEFAULT_PATH}"}
    assert plan.workdir == "/opt/app/sub" and plan.user == "1.2"
    assert plan.metadata["labels"] == {"a": "b"} and plan.metadata["exposed"] == ["80/tcp"]
    assert plan.metadata["cmd"] == ["python3", "-m", "app"]
    kinds = [s.payload["op"] for s in plan.steps]
    assert kinds == ["workdir", "workdir", "copy", "copy"]
    src_copy, txt_copy = plan.steps[2].payload, plan.steps[3].payload
    assert src_copy["dest"] == "/opt/app/sub" and [e[2][0][0] for e in src_copy["sources"]] == ["main.py"]
    assert {e[1] for e in txt_copy["sources"]} == {"a.txt", "b.txt"} and txt_copy["dest_dir"]


def test_context_rules_and_build_errors():
    with pytest.raises(BuildError, match="not in environment"):
        plan_build(make_task("FROM debian:12\nCOPY missing.txt /x\n"))
    with pytest.raises(BuildError, match="outside the build context"):
        plan_build(make_task("FROM debian:12\nCOPY ../tests/test.sh /x\n"))
    with pytest.raises(BuildError, match="is not in environment"):  # .dockerignore'd
        plan_build(make_task("FROM debian:12\nCOPY a.key /x\n", files={"environment/a.key": "k",
                                                                        "environment/.dockerignore": "*.key"}))
    with pytest.raises(BuildError, match="before FROM"):
        plan_build(make_task("RUN true\nFROM debian:12\n"))
    with pytest.raises(BuildError, match="no environment/Dockerfile"):
        plan_build(make_task().with_files({"environment/Dockerfile": None}))


def test_docker_image_without_dockerfile_is_a_from_line():
    task = make_task(environment={"docker_image": "python:3.11-slim"}).with_files({"environment/Dockerfile": None})
    plan = plan_build(task)
    assert (plan.image, plan.base, plan.steps) == ("python:3.11-slim", "python-3.11-bookworm", [])


@pytest.mark.parametrize("dockerfile, why", [
    ("FROM ubuntu:24.04 AS build\nRUN make\nFROM ubuntu:24.04\n", "multi-stage"),
    ("FROM ubuntu:24.04\nCOPY --from=builder /out /out\n", "--from"),
    ("FROM ubuntu:24.04\nADD https://example.com/x.tgz /x\n", "URL"),
    ("FROM nvidia/cuda:12.4.0-runtime-ubuntu22.04\n", "no local base image"),
    ("FROM scratch\n", "scratch"),
    ("FROM ubuntu:24.04\nFROBNICATE all\n", "FROBNICATE is not supported"),
    ("FROM ubuntu:24.04\nRUN --mount=type=secret,id=tok cat /run/secrets/tok\n", "type=secret"),
    ("FROM ubuntu:24.04\nCOPY --exclude=*.md . /app\n", "--exclude"),
])
def test_refusals_name_the_docker_backend(dockerfile, why):
    with pytest.raises(UnsupportedDockerfile) as info:
        plan_build(make_task(dockerfile))
    assert why in info.value.message and "use --backend docker" in info.value.message


def test_compose_environments_are_refused():
    with pytest.raises(UnsupportedDockerfile, match="docker-compose"):
        plan_build(make_task(files={"environment/docker-compose.yaml": "services: {}\n"}))


def test_cache_keys_follow_content():
    base = "FROM ubuntu:24.04\nCOPY a.txt /a.txt\nRUN cat /a.txt\n"
    one = plan_build(make_task(base, files={"environment/a.txt": "1"}))
    same = plan_build(make_task(base, files={"environment/a.txt": "1"}))
    other = plan_build(make_task(base, files={"environment/a.txt": "2"}))
    env = plan_build(make_task("FROM ubuntu:24.04\nENV X=1\nCOPY a.txt /a.txt\nRUN cat /a.txt\n",
                               files={"environment/a.txt": "1"}))
    assert [s.payload for s in one.steps] == [s.payload for s in same.steps]
    assert one.steps[0].payload != other.steps[0].payload  # the copied bytes are in the key
    assert one.steps[0].payload == env.steps[0].payload  # ENV does not change what COPY does ...
    assert one.steps[1].payload != env.steps[1].payload  # ... but it changes what RUN sees
