"""A podman Docker-API service for the docker backend's tests and for CI.

No Docker engine runs on our machines, but podman serves the Docker API (``podman system service``)
and the Docker SDK works against it. It needs the settings measured in docs/sandboxes.md (facts
about our machines): runc (crun refuses hybrid cgroups), cgroupfs, file events, and low default
ulimits (without them runc fails with "setrlimit ... Operation not permitted"). ``podman_service`` reuses a reachable
DOCKER_HOST, else starts a private service with exactly those settings and stops it afterwards.
.ci/podman.sh does the same for a whole CI run, system-wide.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from http.client import HTTPConnection, HTTPException
from pathlib import Path
from typing import Iterator
from urllib.parse import urlparse

from ..errors import MissingPrerequisite

DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"
SYSTEM_SOCKET = "/run/podman/podman.sock"
INSTALL_HINT = "apt-get install -y podman runc, or run .ci/podman.sh (it also starts the service)"
# Global flags that make podman work on hosts with hybrid cgroups and without systemd.
PODMAN_FLAGS = ["--runtime", "runc", "--cgroup-manager=cgroupfs", "--events-backend=file"]
# The same settings as a containers.conf, so that builds run by the service use them as well.
CONTAINERS_CONF = """\
# Written by autoenvscaling (.ci/podman.sh / autoenvscaling.sandbox.podman): settings podman needs on
# hosts with hybrid cgroups and no systemd (see docs/sandboxes.md).
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""


def docker_host() -> str:
    """The engine URL the Docker SDK will use: DOCKER_HOST, else Docker's default socket."""
    return os.environ.get("DOCKER_HOST") or DEFAULT_DOCKER_HOST


class UnixHTTPConnection(HTTPConnection):
    """HTTP over a unix socket (a Docker-API engine's), without the Docker SDK."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


def ping(url: str, timeout: float = 2.0) -> bool:
    """Whether a Docker-API engine answers ``GET /_ping`` at ``url`` (unix:// or tcp://), without
    needing the Docker SDK."""
    parsed = urlparse(url)
    if parsed.scheme in ("unix", "http+unix"):
        conn: HTTPConnection = UnixHTTPConnection(parsed.path, timeout)
    elif parsed.scheme in ("tcp", "http"):
        conn = HTTPConnection(parsed.hostname or "localhost", parsed.port or 2375, timeout=timeout)
    else:
        return False
    try:
        conn.request("GET", "/_ping")
        return conn.getresponse().status == 200
    except (OSError, HTTPException):
        return False
    finally:
        conn.close()


@contextmanager
def podman_service(socket_path: str | Path | None = None, *, start_timeout: float = 30.0) -> Iterator[str]:
    """Yield the URL of a Docker-API engine for the duration of the block.

    A reachable DOCKER_HOST is used as is (and left running). Otherwise a private ``podman system
    service`` is started on ``socket_path`` (default: a fresh temporary directory) with its own
    containers.conf, and stopped when the block ends. Raises MissingPrerequisite when podman is not
    installed or the service does not come up."""
    existing = os.environ.get("DOCKER_HOST")
    if existing and ping(existing):
        yield existing
        return
    if shutil.which("podman") is None:
        raise MissingPrerequisite("podman is not installed, and no Docker-API engine answers"
                                  + (f" at DOCKER_HOST={existing}" if existing else ""), hint=INSTALL_HINT)
    workdir = Path(tempfile.mkdtemp(prefix="autoenvscaling-podman-"))
    sock = Path(socket_path) if socket_path else workdir / "podman.sock"
    sock.parent.mkdir(parents=True, exist_ok=True)
    conf = workdir / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    log = workdir / "service.log"
    url = f"unix://{sock}"
    # CONTAINERS_CONF replaces the system's files for this service only; /etc stays untouched.
    env = {**os.environ, "CONTAINERS_CONF": str(conf)}
    with open(log, "wb") as log_fh:
        proc = subprocess.Popen(["podman", *PODMAN_FLAGS, "system", "service", "--time=0", url], stdout=log_fh,
                                stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL, start_new_session=True,
                                cwd="/")  # conmon fails once the caller's folder is deleted
    try:
        deadline = time.monotonic() + start_timeout
        while not ping(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
                raise MissingPrerequisite(f"podman system service did not start on {sock}: {tail[0][:200]}",
                                          hint="run `podman info` to see what podman needs here")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
        if socket_path:
            Path(socket_path).unlink(missing_ok=True)
