"""Building the Dockerfile subset on the bwrap backend: instruction semantics checked inside a
sandbox, the layer cache, failures and timeouts, concurrent builders."""

from __future__ import annotations

import asyncio
import io
import secrets
import subprocess
import tarfile

import pytest
from autoenvscaling.errors import BuildError
from autoenvscaling.sandbox.isolation import owner_tag

from .conftest import make_task


def _tgz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _build_and_probe(backend, task, command: str):
    async def go():
        prepared = await backend.prepare(task)
        async with await backend.create(task, prepared) as sb:
            return prepared, await sb.exec(command, timeout=60)

    return asyncio.run(go())


def test_instruction_semantics(backend):
    dockerfile = r"""
FROM ubuntu:24.04
ARG GREETING=hello
ENV APP_HOME=/opt/app
WORKDIR $APP_HOME
COPY src/ ./
COPY --chmod=700 tool.sh /usr/local/bin/tool
COPY notes.txt /etc/
COPY notes.txt renamed.txt
ADD bundle.tgz /opt/bundle/
COPY <<EOF /etc/motd
welcome to ${APP_HOME}
EOF
RUN <<EOF
echo "$GREETING from heredoc" > /opt/app/heredoc.txt
EOF
RUN ["/bin/sh", "-c", "echo exec-form > /opt/app/exec.txt"]
SHELL ["/bin/bash", "-c"]
RUN echo "${BASH_VERSION:+bash}" > /opt/app/shell.txt
RUN useradd -m worker
USER worker
WORKDIR sub
RUN whoami > whoami.txt && echo "$GREETING" >> whoami.txt
CMD ["tool"]
"""
    files = {"environment/src/main.py": "print('hi')\n", "environment/src/pkg/mod.py": "X = 1\n",
             "environment/tool.sh": "#!/bin/sh\necho tool-ran\n", "environment/notes.txt": "notes\n",
             "environment/bundle.tgz": _tgz({"inside/a.txt": b"from archive\n"})}
    probe = ("pwd; echo $(ls /opt/app); stat -c %a /usr/local/bin/tool; tool 2>/dev/null || echo denied; "
             "cat /etc/notes.txt /opt/app/renamed.txt /opt/bundle/inside/a.txt /etc/motd /opt/app/heredoc.txt "
             "/opt/app/exec.txt /opt/app/shell.txt whoami.txt; echo \"$APP_HOME|${GREETING:-unset}\"; id -un")
    prepared, result = _build_and_probe(backend, make_task(dockerfile, files=files), probe)
    assert result.ok, result.tail()
    lines = result.stdout.splitlines()
    assert lines[0] == "/opt/app/sub" and prepared.workdir == "/opt/app/sub"
    # src/'s contents land in the workdir (not src/ itself); heredoc/exec/shell outputs are beside them.
    assert lines[1] == "exec.txt heredoc.txt main.py pkg renamed.txt shell.txt sub"
    # root's 0700 tool is closed to USER worker, as in Docker (ids inside are real ids)
    assert lines[2:4] == ["700", "denied"]
    assert lines[4:] == ["notes", "notes", "from archive", "welcome to /opt/app", "hello from heredoc",
                         "exec-form", "bash", "worker", "hello", "/opt/app|unset", "worker"]
    assert prepared.user == "worker" and prepared.details.cmd == ["tool"]
    assert prepared.env["APP_HOME"] == "/opt/app" and "GREETING" not in prepared.env  # ARG is build-only


@pytest.mark.slow
def test_apt_get_install_from_debian(backend):
    """Network is shared at build time only: apt-get reaches Debian's archive while building."""
    task = make_task("FROM ubuntu:24.04\nRUN apt-get update && apt-get install -y --no-install-recommends tree "
                     "&& rm -rf /var/lib/apt/lists/*\n")
    _, result = _build_and_probe(backend, task, "tree --version; apt-get update 2>&1 | tail -1")
    assert result.stdout.startswith("tree v")
    assert "failed to download" in result.stdout  # no network at run time


def test_layer_cache_hits_and_shared_prefixes(backend):
    tag = secrets.token_hex(6)
    dockerfile = f"FROM ubuntu:24.04\nRUN echo {tag} > /tag && sleep 1\nCOPY data.txt /data.txt\n"

    def stamps(layers):  # when each layer was committed: a rebuilt layer gets a new stamp
        return [backend.store.meta(key)["created"] for key in layers]

    async def go():
        first = await backend.prepare(make_task(dockerfile, files={"environment/data.txt": "one"}))
        built = stamps(first.details.layers)
        again = await backend.prepare(make_task(dockerfile, files={"environment/data.txt": "one"}))
        changed = await backend.prepare(make_task(dockerfile, files={"environment/data.txt": "two"}))
        return first, built, again, changed

    first, built, again, changed = asyncio.run(go())
    assert not first.cached and again.cached and again.ref == first.ref
    assert again.details.layers == first.details.layers and stamps(again.details.layers) == built  # nothing rebuilt
    assert not changed.cached and changed.ref != first.ref
    # Only the COPY layer differs: the RUN layer (and everything under it) is shared, not run again.
    assert changed.details.layers[:-1] == first.details.layers[:-1]
    assert stamps(changed.details.layers[:-1]) == built[:-1]


def test_failed_run_reports_command_and_output(backend):
    task = make_task("FROM ubuntu:24.04\nWORKDIR /w\nRUN echo about-to-fail && ls /definitely-missing\n")
    with pytest.raises(BuildError) as info:
        asyncio.run(backend.prepare(task))
    exc = info.value
    assert "RUN failed with exit code 2 at Dockerfile line 3" in exc.message
    assert "ls /definitely-missing" in exc.message and "No such file or directory" in exc.message
    assert "about-to-fail" in str(exc)  # the output tail travels with the error
    # No half-built layer of this process left (other workers may be building theirs in the shared cache).
    assert not list(backend.store.root.glob(f".tmp-{owner_tag()}.*"))


def test_build_timeout(backend):
    # The step never ends on its own: only the build timeout can stop it, and nothing of it survives.
    marker = f"{secrets.randbelow(10**6) + 4000}.{secrets.randbelow(10**8):08d}"
    task = make_task(f"FROM ubuntu:24.04\nRUN sleep {marker}\n", environment={"build_timeout_sec": 2})
    with pytest.raises(BuildError, match="timed out after 2s"):
        asyncio.run(backend.prepare(task))
    assert marker not in subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True).stdout


def test_build_runs_contained(backend):
    """A RUN step cannot reach host files either (it runs as the sandbox uid in its own namespaces)."""
    task = make_task("FROM ubuntu:24.04\nRUN cat /proc/self/uid_map > /uidmap; (ls /work /tmp) > /seen 2>&1; "
                     f"true # {secrets.token_hex(4)}\n")
    _, result = _build_and_probe(backend, task, "cat /uidmap; cat /seen")
    assert result.stdout.split()[:3] == ["0", "1900000000", "65536"]
    assert "No such file" in result.stdout  # /work of the host is not there


def test_concurrent_prepares_build_each_layer_once(bwrap_cls, backend):
    task = make_task(f"FROM ubuntu:24.04\nRUN sleep 1 && echo $$ > /built-by # {secrets.token_hex(4)}\n")
    other = bwrap_cls(policy=backend.policy, cache_dir=backend.cache_dir)

    async def go():
        return await asyncio.gather(backend.prepare(task), other.prepare(task))

    one, two = asyncio.run(go())
    assert one.ref == two.ref
    assert sorted([one.cached, two.cached]) == [False, True]  # the second waited for the first
