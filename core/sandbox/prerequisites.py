"""What the core's own sandbox backends need on the machine, registered as doctor prerequisites by
the built-in plugin (next to the backends), so the doctor itself knows none of it.

Each check only looks: a program on PATH, one HTTP request to the engine's socket (no Docker SDK
needed), the GPU device nodes.
"""

from __future__ import annotations

import json
import os
from http.client import HTTPConnection

from ..plugins.prerequisites import Prerequisite, PrerequisiteStatus, ProgramOnPath
from .gpu import host_gpus
from .podman import UnixHTTPConnection, docker_host

ENGINE_HINT = ("start one: `eval \"$(bash .ci/podman.sh)\"` in a checkout, or `podman system service --time=0 "
               "unix:///run/podman.sock` and DOCKER_HOST=unix:///run/podman.sock")


def docker_engine(timeout: float = 2.0) -> dict[str, str | bool | None]:
    """Whether a Docker-API engine answers at DOCKER_HOST (default unix:///var/run/docker.sock),
    asked over plain HTTP so the Docker SDK need not be installed."""
    url = docker_host()
    row: dict[str, str | bool | None] = {"host": url, "reachable": False, "version": None, "detail": "", "hint": None}
    try:
        if url.startswith("unix://"):
            conn: HTTPConnection = UnixHTTPConnection(url.removeprefix("unix://"), timeout)
        elif url.startswith(("tcp://", "http://")) and not os.environ.get("DOCKER_TLS_VERIFY"):
            hostport = url.split("://", 1)[1].rstrip("/")
            conn = HTTPConnection(hostport, timeout=timeout)
        else:
            row["detail"] = "not probed (TLS or an unsupported scheme); use `docker version`"
            return row
        conn.request("GET", "/version")
        response = conn.getresponse()
        body = response.read()
        conn.close()
        if response.status != 200:
            row["detail"] = f"answered HTTP {response.status}"
            return row
        info = json.loads(body)
        row.update(reachable=True, version=f"{info.get('Version')} (API {info.get('ApiVersion')})",
                   detail=next((c.get("Name", "") for c in info.get("Components") or []), "") or "engine")
    except (OSError, ValueError) as exc:
        row["detail"] = f"no engine answers: {exc}"
        row["hint"] = ENGINE_HINT
    return row


class DockerEngine(Prerequisite):
    """A Docker-API engine answering at DOCKER_HOST."""

    needed_for = "the docker sandbox backend (compose environments, images from an engine)"

    def check(self) -> PrerequisiteStatus:
        row = docker_engine()
        if row["reachable"]:
            return PrerequisiteStatus(ok=True, detail=f"{row['host']}: {row['version']}")
        return PrerequisiteStatus(ok=False, detail=f"{row['host']}: {row['detail']}", hint=ENGINE_HINT)


class Bubblewrap(ProgramOnPath):
    """The bwrap program."""

    needed_for = "the bwrap sandbox backend (the default)"
    program = "bwrap"
    install_hint = "apt-get install bubblewrap"


class NvidiaGpu(Prerequisite):
    """NVIDIA GPUs a sandbox can be given (device nodes; models from nvidia-smi)."""

    needed_for = "tasks that set [environment] gpus (refused without one)"

    def check(self) -> PrerequisiteStatus:
        gpus = host_gpus()
        if not gpus.count:
            return PrerequisiteStatus(ok=False, detail="no /dev/nvidia* device nodes",
                                      hint="run GPU tasks on a machine with an NVIDIA GPU and its driver")
        models = ", ".join(gpus.models) or "models unknown (nvidia-smi not found)"
        return PrerequisiteStatus(ok=True, detail=f"{gpus.count} GPU(s): {models}")
