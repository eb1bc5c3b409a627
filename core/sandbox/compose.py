"""Multi-container (docker-compose) environments on the docker backend, through the Docker SDK.

How Harbor reads such a task, and so how we do: environment/docker-compose.yaml (or .yml,
compose.yaml) is an overlay on Harbor's own base file, which defines the service ``main``: built
from environment/ (``build: context: ${CONTEXT_DIR}``, ``image: ${MAIN_IMAGE_NAME}``), kept alive with
``sleep infinity``, with the trial's log folders mounted. ``main`` is the agent's sandbox; every other
service is a sidecar the agent reaches by its service name. A task's file may add to ``main``
(environment, depends_on, a healthcheck) or define it whole; sidecars come from ``build:`` (a
context inside environment/) or ``image:``. Harbor's variables (CONTEXT_DIR, MAIN_IMAGE_NAME,
TEST_DIR, the log paths, CPUS, MEMORY) are given their meaning here; other ``${VAR}`` references
come from environment/.env or their defaults, never from the host's environment (an attempt must not
depend on who runs it).

At run time each attempt gets a private network (internal, so no internet unless the policy grants
it) on which every service has its name as alias; services start in depends_on order, each waiting
for its dependencies' conditions (started, healthy, completed successfully); healthchecks are run
by us as execs (podman runs image healthchecks only through systemd timers, and polling keeps the
wait short), and once everything is up every service with a healthcheck must be healthy, as
``docker compose up --wait`` requires. ``main`` is created by the sandbox itself (its command is the
sandbox's init, its limits the policy's); sidecars get the same hardening (capabilities dropped,
no-new-privileges, memory and pids limits) and keep running between the agent's commands: the
per-command sweep only runs inside ``main``. ``down`` removes every container, volume and the network.

The bridge's gateway is an address of the host: a container on any bridge network can reach the
host's services that listen on all addresses. Where we may (a local engine, root, iptables), the
attempt's bridge interface gets INPUT rules that drop everything but DNS (the engine's resolver
listens there); elsewhere the protection is reported inactive.

Refused, one line each with what works instead: privileged containers, host namespaces, devices,
extra capabilities, host bind mounts, external networks and volumes, secrets. Ignored with a note:
published ports (nothing outside the attempt may connect), restart policies, container names.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import subprocess
import time
import uuid
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field

from ..errors import BuildError, MissingPrerequisite, SandboxError, UnsupportedDockerfile
from ..tasks import Task
from ..tasks.task import COMPOSE_FILES, compose_file  # noqa: F401 - the task format's names, re-exported
from .base import Protection, make_tar
from .docker_images import LABEL

if TYPE_CHECKING:
    from .docker_backend import DockerBackend

MAIN = "main"
MAIN_IMAGE = "\0main-image"  # what ${MAIN_IMAGE_NAME} stands for: the task's own image
HARBOR_MOUNT = "\0harbor-mount"  # a host log folder of Harbor's; our runner handles /logs itself
CONDITIONS = ("service_started", "service_healthy", "service_completed_successfully")
START_TIMEOUT = 300.0  # the longest a service may take to become healthy or complete
HEALTH_POLL = 1.0  # seconds between health probes at most (a probe may run sooner than its interval)
# Keys we act on, keys we ignore with a note (why), and keys we refuse (what works instead).
_SUPPORTED = {"build", "image", "command", "entrypoint", "environment", "env_file", "depends_on", "healthcheck",
              "working_dir", "user", "volumes", "extra_hosts", "networks", "expose", "tmpfs", "cap_add", "cap_drop",
              "init", "shm_size", "hostname"}
_IGNORED = {
    "ports": "published ports are ignored (services reach each other by name; nothing outside may connect)",
    "container_name": "container names are per attempt",
    "restart": "restart policies are ignored (a sandbox lives for one attempt)",
    "stop_grace_period": "services are stopped with SIGKILL when the attempt ends",
    "stop_signal": "services are stopped with SIGKILL when the attempt ends",
    "labels": "labels are ignored", "logging": "logging settings are ignored", "platform": "platform is ignored",
    "pull_policy": "images are never pulled", "tty": "tty is ignored", "stdin_open": "stdin_open is ignored",
    "deploy": "resource limits come from the sandbox policy", "mem_limit": "memory limits come from the sandbox policy",
    "cpus": "CPU limits come from the sandbox policy", "ulimits": "ulimits come from the sandbox policy",
    "links": "links are ignored (every service is reachable by name)",
}
_REFUSED = {
    "privileged": "privileged containers are not allowed; add the capability your service needs to cap_add",
    "pid": "host or shared pid namespaces are not allowed",
    "ipc": "host or shared ipc namespaces are not allowed",
    "userns_mode": "host user namespaces are not allowed",
    "network_mode": "network_mode is not allowed; services share the attempt's network by default",
    "devices": "host devices are not allowed",
    "security_opt": "security_opt is not allowed (no-new-privileges is always set)",
    "sysctls": "sysctls are not allowed",
    "cgroup_parent": "cgroup_parent is not allowed",
    "volumes_from": "volumes_from is not allowed; share a named volume instead",
    "external_links": "external links are not allowed",
    "extends": "extends is not supported; write the service out in full",
    "secrets": "secrets are not supported; COPY the file in the Dockerfile or mount it from environment/",
    "configs": "configs are not supported; COPY the file in the Dockerfile or mount it from environment/",
    "runtime": "runtime is not allowed", "gpus": "GPUs are not supported on the docker backend",
    "group_add": "group_add is not supported", "oom_kill_disable": "oom_kill_disable is not allowed",
}
_TOP_LEVEL = {"version", "name", "services", "volumes", "networks"}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)")
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_VAR = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


class Healthcheck(BaseModel):
    """A service's health probe: ``test`` is the argv to exec (CMD-SHELL becomes ``/bin/sh -c``)."""

    model_config = ConfigDict(frozen=True)

    test: list[str]
    interval: float = 30.0
    timeout: float = 30.0
    retries: int = 3
    start_period: float = 0.0

    def patience(self) -> float:
        """How long a service may take to become healthy: what Docker allows before it declares the
        service unhealthy (start period, then ``retries`` failed probes), capped at START_TIMEOUT."""
        return min(START_TIMEOUT, self.start_period + max(1, self.retries) * (self.interval + self.timeout))


class BuildSpec(BaseModel):
    """``build:``: a context folder inside environment/ ("" is environment/ itself)."""

    model_config = ConfigDict(frozen=True)

    context: str = ""
    dockerfile: str = "Dockerfile"
    inline: str | None = None
    args: dict[str, str] = Field(default_factory=dict)
    target: str = ""


class Service(BaseModel):
    """One compose service as we run it. ``image_id`` is filled when the environment is prepared."""

    model_config = ConfigDict(frozen=True)

    name: str
    build: BuildSpec | None = None
    image: str | None = None
    image_id: str = ""
    command: list[str] | None = None
    entrypoint: list[str] | None = None
    environment: dict[str, str] = Field(default_factory=dict)
    depends_on: dict[str, str] = Field(default_factory=dict)  # service -> condition
    healthcheck: Healthcheck | None = None
    healthcheck_disabled: bool = False
    working_dir: str | None = None
    user: str | None = None
    extra_hosts: dict[str, str] = Field(default_factory=dict)
    aliases: list[str] = Field(default_factory=list)
    copies: list[tuple[str, str]] = Field(default_factory=list)  # (path in environment/, target)
    volumes: list[tuple[str, str, bool]] = Field(default_factory=list)  # (named volume, target, read-only)
    tmpfs: list[str] = Field(default_factory=list)
    cap_add: list[str] = Field(default_factory=list)
    cap_drop: list[str] = Field(default_factory=list)
    init: bool = False
    shm_size: str | None = None


class ComposeSpec(BaseModel):
    """A task's compose file as we run it: services in start order (``main`` among them)."""

    model_config = ConfigDict(frozen=True)

    file: str
    services: dict[str, Service]
    order: list[str]
    volumes: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def main(self) -> Service:
        return self.services[MAIN]

    @property
    def sidecars(self) -> list[Service]:
        return [self.services[name] for name in self.order if name != MAIN]

    def with_services(self, services: dict[str, Service]) -> "ComposeSpec":
        return self.model_copy(update={"services": services})


# -- loading -----------------------------------------------------------------------------------------
def load_compose(task: Task) -> ComposeSpec | None:
    """The task's compose file, interpolated, checked and put in start order (None: no file).
    Raises UnsupportedDockerfile (a BuildError) for what we cannot honour, BuildError when malformed."""
    name = compose_file(task)
    if name is None:
        return None
    try:
        import yaml
    except ImportError as exc:
        raise MissingPrerequisite("PyYAML is not installed (needed to read docker-compose files)",
                                  hint="pip install 'autoenvscaling[docker]'") from exc
    where = f"environment/{name}"
    try:
        raw = yaml.safe_load(task.files[where].text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise BuildError(f"{where}{line}: not valid YAML ({getattr(exc, 'problem', None) or exc})",
                         hint="check the indentation; `python3 -c 'import yaml,sys; yaml.safe_load(sys.stdin)' < FILE`")
    if not isinstance(raw, dict) or not isinstance(raw.get("services") or {}, dict):
        raise BuildError(f"{where}: expected a mapping with a `services:` mapping", hint="start it with `services:`")
    loader = _Loader(task, where)
    return loader.load(_interpolate(raw, loader.variables(), loader.notes, where))


class _Loader:
    """Turns one parsed compose document into a ComposeSpec (notes collect what was ignored)."""

    def __init__(self, task: Task, where: str) -> None:
        self.task, self.where = task, where
        self.notes: list[str] = []
        self.named_volumes: set[str] = set()

    def variables(self) -> dict[str, str]:
        """environment/.env, then Harbor's variables (which win, as Harbor's own values do)."""
        found = _env_lines(self.task.files.get("environment/.env"))
        env = self.task.config.environment
        found.update({"MAIN_IMAGE_NAME": MAIN_IMAGE, "CONTEXT_DIR": ".", "TEST_DIR": "/tests",
                      "HOST_VERIFIER_LOGS_PATH": HARBOR_MOUNT, "HOST_AGENT_LOGS_PATH": HARBOR_MOUNT,
                      "HOST_ARTIFACTS_PATH": HARBOR_MOUNT, "ENV_VERIFIER_LOGS_PATH": "/logs/verifier",
                      "ENV_AGENT_LOGS_PATH": "/logs/agent", "ENV_ARTIFACTS_PATH": "/logs/artifacts",
                      "CPUS": f"{env.cpus:g}", "MEMORY": f"{env.memory_mb}M"})
        return found

    def load(self, doc: dict[str, Any]) -> ComposeSpec:
        for key in doc:
            if key not in _TOP_LEVEL and not str(key).startswith("x-"):
                raise self.refuse(f"top-level `{key}` is not supported", "remove it")
        self._volumes(doc.get("volumes") or {})
        self._networks(doc.get("networks") or {})
        raw_services = doc.get("services") or {}
        services: dict[str, Service] = {}
        for name, body in raw_services.items():
            if not isinstance(body, dict):
                raise BuildError(f"{self.where}: service {name} must be a mapping")
            if body.get("profiles"):
                self.notes.append(f"service {name} has profiles: not started (as `docker compose up` does)")
                continue
            services[str(name)] = self._service(str(name), body)
        services[MAIN] = self._main(services.get(MAIN))
        order = _start_order(services, self.where)
        return ComposeSpec(file=self.where, services=services, order=order, volumes=sorted(self.named_volumes),
                           notes=list(dict.fromkeys(self.notes)))

    def refuse(self, what: str, hint: str) -> UnsupportedDockerfile:
        return UnsupportedDockerfile(f"{self.where}: {what}", hint=hint)

    def _volumes(self, volumes: Any) -> None:
        for name, body in (volumes or {}).items():
            if isinstance(body, dict) and body.get("external"):
                raise self.refuse(f"volume {name} is external", "declare it without `external` (a fresh volume per attempt)")
            self.named_volumes.add(str(name))

    def _networks(self, networks: Any) -> None:
        for name, body in (networks or {}).items():
            if isinstance(body, dict) and body.get("external"):
                raise self.refuse(f"network {name} is external",
                                  "drop the network: every service shares the attempt's private network")
        if networks:
            self.notes.append("networks: every service shares one private network per attempt")

    def _main(self, given: Service | None) -> Service:
        """Harbor's base file: ``main`` builds environment/ unless the task's file says otherwise."""
        main = given or Service(name=MAIN)
        if main.build is not None or (main.image and not main.image.startswith(MAIN_IMAGE)):
            return main
        if "environment/Dockerfile" in self.task.files:
            return main.model_copy(update={"build": BuildSpec(), "image": None})
        if self.task.config.environment.docker_image:
            return main.model_copy(update={"image": self.task.config.environment.docker_image})
        raise BuildError(f"{self.where}: service main has no build and there is no environment/Dockerfile",
                         hint="add environment/Dockerfile (Harbor builds main from it) or give main an image")

    def _service(self, name: str, body: dict[str, Any]) -> Service:
        fields: dict[str, Any] = {"name": name}
        for key, value in body.items():
            key = str(key)
            if key in _REFUSED:
                raise self.refuse(f"service {name}: `{key}` is not allowed", _REFUSED[key])
            if key in _IGNORED:
                self.notes.append(f"service {name}: {_IGNORED[key]}")
            elif key.startswith("x-") or key in ("expose", "networks", "hostname"):
                if key == "hostname" and isinstance(value, str) and value != name:
                    fields["aliases"] = [value]
            elif key not in _SUPPORTED:
                raise self.refuse(f"service {name}: `{key}` is not supported",
                                  f"remove `{key}`; supported: {', '.join(sorted(_SUPPORTED | set(_IGNORED)))}")
        if body.get("build") is not None:
            fields["build"] = self._build(name, body["build"])
        if body.get("image") is not None:
            fields["image"] = str(body["image"])
        if fields.get("build") is None and not fields.get("image") and name != MAIN:
            raise BuildError(f"{self.where}: service {name} has neither build nor image",
                             hint="give it `build: ./dir` (a folder of environment/) or `image:`")
        for key in ("command", "entrypoint"):
            if body.get(key) is not None:
                fields[key] = _argv(body[key])
        fields["environment"] = {**self._env_files(name, body.get("env_file")),
                                 **_mapping(body.get("environment"), f"service {name}: environment")}
        fields["depends_on"] = _depends(name, body.get("depends_on"), self.where)
        fields.update(_health(name, body.get("healthcheck"), self.where))
        for key in ("working_dir", "user", "shm_size"):
            if body.get(key) is not None:
                fields[key] = str(body[key])
        fields["init"] = bool(body.get("init"))
        fields["extra_hosts"] = _hosts(body.get("extra_hosts"))
        fields["tmpfs"] = [str(t).split(":")[0] for t in _listify(body.get("tmpfs"))]
        fields["cap_add"] = self._caps(name, body.get("cap_add"))
        fields["cap_drop"] = [str(c).upper().removeprefix("CAP_") for c in _listify(body.get("cap_drop"))]
        copies, volumes = self._mounts(name, body.get("volumes"))
        fields.update(copies=copies, volumes=volumes)
        service = Service(**fields)
        if name == MAIN:
            self._check_main(service, body)
        return service

    def _check_main(self, main: Service, body: dict[str, Any]) -> None:
        """The sandbox runs its own init as main's command (after the image's ENTRYPOINT), as
        Harbor's ``sleep infinity`` does; a command that only keeps main alive is that."""
        if main.command is not None and not _keeps_alive(main.command):
            raise self.refuse("service main: a command other than a keep-alive (sleep infinity) is not supported",
                              "start services in the image's ENTRYPOINT (it runs before the agent, then "
                              "`exec \"$@\"`), or in a sidecar service")
        if main.entrypoint is not None:
            raise self.refuse("service main: entrypoint is not supported", "set ENTRYPOINT in environment/Dockerfile")
        if main.cap_add or main.cap_drop:
            self.notes.append("service main: its capabilities are the sandbox policy's (cap_add/cap_drop ignored)")
        if body.get("command") is not None:
            self.notes.append("service main: its keep-alive command is replaced by the sandbox's init")

    def _build(self, name: str, value: Any) -> BuildSpec:
        spec = {"context": value} if isinstance(value, str) else dict(value or {})
        context = _inside_environment(str(spec.get("context") or "."), f"service {name}: build context", self)
        dockerfile = str(spec.get("dockerfile") or "Dockerfile")
        if not spec.get("dockerfile_inline"):
            path = f"{context}/{dockerfile}" if context else dockerfile
            rel = _inside_environment(path, f"service {name}: dockerfile", self)
            if f"environment/{rel}" not in self.task.files:
                raise BuildError(f"{self.where}: service {name}: environment/{rel} does not exist",
                                 hint="build contexts and Dockerfiles are relative to environment/")
            if not rel.startswith(f"{context}/" if context else ""):
                raise self.refuse(f"service {name}: the dockerfile must be inside its build context",
                                  "move it into the context folder")
            dockerfile = rel[len(context) + 1:] if context else rel
        for key in spec:
            if key not in ("context", "dockerfile", "dockerfile_inline", "args", "target"):
                raise self.refuse(f"service {name}: build.{key} is not supported",
                                  "keep build to context, dockerfile, args and target")
        return BuildSpec(context=context, dockerfile=dockerfile, inline=spec.get("dockerfile_inline"),
                         args=_mapping(spec.get("args"), f"service {name}: build.args"),
                         target=str(spec.get("target") or ""))

    def _env_files(self, name: str, value: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        for item in _listify(value):
            path = str(item.get("path") if isinstance(item, dict) else item)
            rel = _inside_environment(path, f"service {name}: env_file", self)
            found = self.task.files.get(f"environment/{rel}")
            if found is None:
                if isinstance(item, dict) and item.get("required") is False:
                    continue
                raise BuildError(f"{self.where}: service {name}: env_file environment/{rel} does not exist")
            out.update(_env_lines(found))
        return out

    def _caps(self, name: str, value: Any) -> list[str]:
        from .docker_backend import CAPABILITIES

        caps = [str(c).upper().removeprefix("CAP_") for c in _listify(value)]
        extra = [c for c in caps if c not in CAPABILITIES]
        if extra:
            raise self.refuse(f"service {name}: cap_add {', '.join(extra)} is not allowed",
                              f"services run with {', '.join(CAPABILITIES)}; drop the others")
        return caps

    def _mounts(self, name: str, value: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str, bool]]]:
        """Volumes: named volumes become per-attempt volumes; files and folders of environment/ are
        copied in before the service starts (a snapshot, not a live bind); host paths are refused."""
        copies: list[tuple[str, str]] = []
        volumes: list[tuple[str, str, bool]] = []
        for item in _listify(value):
            source, target, read_only = _volume_parts(item)
            if source == HARBOR_MOUNT or source.startswith(HARBOR_MOUNT):
                continue
            if not source:
                self.notes.append(f"service {name}: anonymous volume {target} is a plain folder of the container")
            elif source in self.named_volumes or re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", source):
                self.named_volumes.add(source)
                volumes.append((source, target, read_only))
            elif source.startswith(("/", "~")):
                raise self.refuse(f"service {name}: bind mount of the host path {source} is not allowed",
                                  "put the files in environment/ and mount them as ./path, or COPY them in the Dockerfile")
            else:
                rel = _inside_environment(source, f"service {name}: volume {source}", self)
                if not any(p == f"environment/{rel}" or p.startswith(f"environment/{rel}/") for p in self.task.files):
                    raise BuildError(f"{self.where}: service {name}: volume source environment/{rel} does not exist")
                copies.append((rel, target))
                self.notes.append(f"service {name}: {source} is copied to {target} at start (not a live bind)")
        return copies, volumes


def _interpolate(value: Any, variables: dict[str, str], notes: list[str], where: str) -> Any:
    """Compose's ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?error}``,
    ``${VAR:+alt}`` and ``$$`` in every string of the document."""
    if isinstance(value, dict):
        return {k: _interpolate(v, variables, notes, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, variables, notes, where) for v in value]
    if not isinstance(value, str):
        return value

    def repl(match: re.Match[str]) -> str:
        if match.group(1):
            return "$"
        name = match.group(2) or match.group(5)
        op, word = match.group(3), match.group(4) or ""
        present = name in variables and (variables[name] != "" or (op or "").startswith(("-", "+", "?")))
        if op in (":-", "-"):
            return variables[name] if present else _interpolate(word, variables, notes, where)
        if op in (":+", "+"):
            return _interpolate(word, variables, notes, where) if present else ""
        if op in (":?", "?") and not present:
            raise BuildError(f"{where}: required variable {name} is not set: {word or 'no message'}",
                             hint="define it in environment/.env")
        if name not in variables:
            notes.append(f"variable {name} is not set: an empty string is used")
        return variables.get(name, "")

    return _VAR.sub(repl, value)


def _env_lines(found: Any) -> dict[str, str]:
    """KEY=VALUE lines of an env file (comments, blank lines and ``export`` allowed)."""
    out: dict[str, str] = {}
    for raw in (found.text.splitlines() if found is not None else []):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, eq, value = line.removeprefix("export ").partition("=")
        if not eq:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key.strip()] = value
    return out


def _listify(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _mapping(value: Any, what: str) -> dict[str, str]:
    """A compose mapping given as a dict or as a ``KEY=VALUE`` list; values become strings (a key
    without a value is left out: compose would take it from the host, which we never read)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): _scalar(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return {k: v for k, eq, v in (str(item).partition("=") for item in value) if eq}
    raise BuildError(f"{what} must be a mapping or a list of KEY=VALUE")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _argv(value: Any) -> list[str]:
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in _listify(value)]


def _keeps_alive(argv: list[str]) -> bool:
    text = " ".join(argv)
    return bool(re.fullmatch(r"(?:(?:/bin/)?(?:ba)?sh -c )?(?:sleep (?:infinity|inf|\d{5,})|tail -f /dev/null)", text))


def _hosts(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    pairs = (re.split(r"[:=]", str(item), maxsplit=1) for item in _listify(value))
    return {p[0]: p[1] for p in pairs if len(p) == 2}


def _depends(name: str, value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if isinstance(value, list):
        return {str(dep): "service_started" for dep in value}
    if not isinstance(value, dict):
        raise BuildError(f"{where}: service {name}: depends_on must be a list or a mapping")
    out = {}
    for dep, body in value.items():
        condition = str((body or {}).get("condition") or "service_started")
        if condition not in CONDITIONS:
            raise BuildError(f"{where}: service {name}: unknown depends_on condition {condition!r}",
                             hint=f"use one of {', '.join(CONDITIONS)}")
        out[str(dep)] = condition
    return out


def _health(name: str, value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BuildError(f"{where}: service {name}: healthcheck must be a mapping")
    test = value.get("test")
    if value.get("disable") or test in (["NONE"], "NONE"):
        return {"healthcheck_disabled": True}
    if isinstance(test, str):
        argv = ["/bin/sh", "-c", test]
    elif isinstance(test, list) and test and test[0] in ("CMD", "CMD-SHELL"):
        argv = ["/bin/sh", "-c", " ".join(map(str, test[1:]))] if test[0] == "CMD-SHELL" else [str(t) for t in test[1:]]
    else:
        raise BuildError(f"{where}: service {name}: healthcheck.test must be a string or start with CMD or CMD-SHELL")
    if not argv or argv == ["/bin/sh", "-c", ""]:
        raise BuildError(f"{where}: service {name}: healthcheck.test is empty")
    check = Healthcheck(test=argv, **{key: _duration(value[key], where) for key in ("interval", "timeout", "start_period")
                                      if value.get(key) is not None},
                        retries=int(value.get("retries", 3)))
    return {"healthcheck": check}


def _duration(value: Any, where: str) -> float:
    """Compose durations: ``1m30s``, ``500ms``, ``10s`` (a bare number is seconds)."""
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise BuildError(f"{where}: {value!r} is not a duration", hint="write durations like 10s, 1m30s or 500ms")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def _volume_parts(item: Any) -> tuple[str, str, bool]:
    """(source, target, read-only) of a short (``src:dst[:ro]``) or long volume entry."""
    if isinstance(item, dict):
        if item.get("type") == "tmpfs":
            return "", str(item.get("target", "")), False
        return str(item.get("source") or ""), str(item.get("target", "")), bool(item.get("read_only"))
    parts = str(item).split(":")
    if len(parts) == 1:
        return "", parts[0], False
    return parts[0], parts[1], len(parts) > 2 and "ro" in parts[2].split(",")


def _inside_environment(path: str, what: str, loader: _Loader) -> str:
    """A path relative to environment/ that stays inside it ("" for environment/ itself)."""
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise loader.refuse(f"{what}: {path} leaves environment/ (the task directory holds tests/ and solution/)",
                                    "keep every build context and mounted file inside environment/")
            parts.pop()
        else:
            parts.append(part)
    if path.startswith(("/", "~")):
        raise loader.refuse(f"{what}: {path} is a host path", "use a path relative to environment/")
    return "/".join(parts)


def _start_order(services: dict[str, Service], where: str) -> list[str]:
    """Dependencies first, otherwise in the order written; a cycle or an unknown name is an error."""
    for service in services.values():
        for dep in service.depends_on:
            if dep not in services:
                raise BuildError(f"{where}: service {service.name} depends on {dep}, which is not defined")
            if service.depends_on[dep] == "service_healthy" and services[dep].healthcheck_disabled:
                raise BuildError(f"{where}: service {service.name} waits for {dep} to be healthy, "
                                 f"but {dep}'s healthcheck is disabled")
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            cycle = " -> ".join(visiting[visiting.index(name):] + [name])
            raise BuildError(f"{where}: depends_on has a cycle: {cycle}")
        visiting.append(name)
        for dep in services[name].depends_on:
            visit(dep)
        visiting.pop()
        order.append(name)

    for name in services:
        visit(name)
    return order


def check_health_conditions(spec: ComposeSpec) -> None:
    """Every service others wait for with service_healthy has a healthcheck (its own or its image's)."""
    for service in spec.services.values():
        for dep, condition in service.depends_on.items():
            if condition == "service_healthy" and spec.services[dep].healthcheck is None:
                raise BuildError(f"{spec.file}: service {service.name} waits for {dep} to be healthy, "
                                 f"but {dep} has no healthcheck",
                                 hint=f"add a healthcheck to {dep}, or wait with condition: service_started")


def image_healthcheck(config: dict[str, Any]) -> Healthcheck | None:
    """The image's own HEALTHCHECK (Docker's nanosecond durations), used when compose sets none."""
    check = config.get("Healthcheck") or {}
    test = list(check.get("Test") or [])
    if not test or test[0] == "NONE":
        return None
    argv = ["/bin/sh", "-c", " ".join(test[1:])] if test[0] == "CMD-SHELL" else test[1:]
    seconds = {key: (check.get(src) or 0) / 1e9 for key, src in
               (("interval", "Interval"), ("timeout", "Timeout"), ("start_period", "StartPeriod"))}
    return Healthcheck(test=argv, retries=int(check.get("Retries") or 3),
                       **{k: v for k, v in seconds.items() if v > 0})


# -- running -----------------------------------------------------------------------------------------
# Creates and starts main from the group's settings and file uploads; returns its container id.
StartMain = Callable[[dict[str, Any], list[tuple[str, bytes]]], Awaitable[str]]


class ComposeGroup:
    """The sidecars, volumes and network of one attempt. ``up`` starts everything in order (``main``
    through the sandbox's own hook) and waits until it is healthy; ``down`` removes it all."""

    NETWORK_PREFIX = "aes-net-"

    def __init__(self, backend: "DockerBackend", task: Task, spec: ComposeSpec) -> None:
        self.backend, self.task, self.spec = backend, task, spec
        self.attempt = uuid.uuid4().hex[:12]
        self.network = f"{self.NETWORK_PREFIX}{self.attempt}"
        self.interface = f"aes{self.attempt[:10]}"  # a bridge name has at most 15 characters
        self.labels = {**backend.labels(task), f"{LABEL}.attempt": self.attempt}
        self.containers: dict[str, str] = {}  # service -> container id
        self.healthy: set[str] = set()
        self.guard: HostGuard | None = None
        self.volumes: list[str] = []

    def volume(self, name: str) -> str:
        return f"aes-{self.attempt}-{name}"

    async def up(self, start_main: StartMain) -> None:
        await self.backend.call(self._create_network, what="create network")
        self.guard = HostGuard(self.interface)
        protection = await asyncio.to_thread(self.guard.apply)
        self.backend.observed("compose host guard", protection)
        for name in self.spec.volumes:
            await self.backend.call(self._create_volume, name, what=f"create volume {name}")
        for name in self.spec.order:
            service = self.spec.services[name]
            for dep, condition in service.depends_on.items():
                await self._await_condition(dep, condition)
            if name == MAIN:
                self.containers[MAIN] = await start_main(self.service_settings(service, main=True),
                                                         self.copy_tars(service))
            else:
                self.containers[name] = await self.backend.call(self._start_sidecar, service,
                                                                what=f"start service {name}")
        for name in self.spec.order:  # what `docker compose up --wait` requires
            await self._await_condition(name, "service_healthy" if self._check(name) else "service_started")

    def _create_network(self) -> None:
        wanted = self.backend.policy.network_for(self.task)
        network = self.backend.client.networks.create(
            self.network, driver="bridge", internal=not wanted,
            labels={**self.labels, f"{LABEL}.interface": self.interface},
            options={"com.docker.network.bridge.name": self.interface})
        internal = bool(self.backend.client.api.inspect_network(network.id).get("Internal"))
        self.backend.observed("compose network offline", Protection(
            name="compose network offline", active=internal,
            detail="each compose attempt has a private internal network: services reach each other, not the internet"
                   + (" (task granted internet)" if wanted else "")))

    def _create_volume(self, name: str) -> None:
        self.backend.client.volumes.create(self.volume(name), labels=self.labels)
        self.volumes.append(self.volume(name))

    def service_settings(self, service: Service, *, main: bool = False) -> dict[str, Any]:
        """What every service's container gets on top of its image: the network with its name as
        alias, environment, hosts, mounts."""
        from docker.types import Mount

        settings: dict[str, Any] = {
            "network": self.network, "hostname": service.name,
            "networking_config": {self.network: self.backend.client.api.create_endpoint_config(
                aliases=[service.name, *service.aliases])},
            "environment": dict(service.environment), "labels": {**self.labels, f"{LABEL}.service": service.name},
            "name": f"aes-{self.attempt}-{service.name}",
        }
        if service.extra_hosts:
            settings["extra_hosts"] = dict(service.extra_hosts)
        mounts = [Mount(target, self.volume(volume), type="volume", read_only=read_only)
                  for volume, target, read_only in service.volumes]
        if mounts:
            settings["mounts"] = mounts
        if service.tmpfs:
            settings["tmpfs"] = {path: "" for path in service.tmpfs}
        if service.shm_size:
            settings["shm_size"] = service.shm_size
        if not main:
            settings.update(image=service.image_id, command=service.command, entrypoint=service.entrypoint,
                            init=service.init or None)
            if service.working_dir:
                settings["working_dir"] = service.working_dir
            if service.user:
                settings["user"] = service.user
        return settings

    def _start_sidecar(self, service: Service) -> str:
        settings = {**self.backend.hardening(self.task, add_caps=service.cap_add, drop_caps=service.cap_drop),
                    **self.service_settings(service)}
        return self.backend.create_container({k: v for k, v in settings.items() if v is not None},
                                             files=self.copy_tars(service))

    def copy_tars(self, service: Service) -> list[tuple[str, bytes]]:
        """(directory, tar) uploads that place a service's copied files at their targets."""
        out = []
        files = self.task.environment_files
        for source, target in service.copies:
            if source in files:  # one file: it lands at target
                parent, _, base = target.rstrip("/").rpartition("/")
                out.append((parent or "/", make_tar({base: (files[source].data, files[source].executable)})))
            else:
                prefix = f"{source}/" if source else ""
                tree = {rel[len(prefix):]: (f.data, f.executable) for rel, f in files.items() if rel.startswith(prefix)}
                out.append((target, make_tar(tree)))
        return out

    def _check(self, name: str) -> Healthcheck | None:
        service = self.spec.services[name]
        return None if service.healthcheck_disabled else service.healthcheck

    async def _await_condition(self, name: str, condition: str) -> None:
        if condition == "service_healthy":
            await self._await_healthy(name)
        elif condition == "service_completed_successfully":
            await self._await_completed(name)
        else:
            await self._await_running(name)

    async def _state(self, name: str) -> dict[str, Any]:
        info = await self.backend.call(self.backend.client.api.inspect_container, self.containers[name],
                                       what=f"inspect service {name}")
        return info.get("State") or {}

    async def _await_running(self, name: str) -> None:
        state = await self._state(name)
        if not state.get("Running") and state.get("ExitCode", 0) != 0:
            raise await self._stopped(name, state)

    async def _await_completed(self, name: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            state = await self._state(name)
            if not state.get("Running"):
                if state.get("ExitCode", 0) != 0:
                    raise await self._stopped(name, state)
                return
            if time.monotonic() > deadline:
                raise SandboxError(f"compose service {name} did not complete within {START_TIMEOUT:g}s",
                                   hint="a service others wait for with service_completed_successfully must exit")
            await asyncio.sleep(0.2)

    async def _await_healthy(self, name: str) -> None:
        check = self._check(name)
        if name in self.healthy or check is None:
            return
        deadline = time.monotonic() + check.patience()
        last = "no probe finished"
        while True:
            state = await self._state(name)
            if not state.get("Running"):
                raise await self._stopped(name, state)
            ok, last = await self._probe(name, check)
            if ok:
                self.healthy.add(name)
                return
            if time.monotonic() > deadline:
                raise SandboxError(f"compose service {name} did not become healthy within {check.patience():g}s; "
                                   f"last health check: {last}",
                                   hint=f"fix its healthcheck or what it checks (test: {shlex.join(check.test)[:120]})")
            await asyncio.sleep(min(check.interval, HEALTH_POLL))

    async def _probe(self, name: str, check: Healthcheck) -> tuple[bool, str]:
        """One health probe as an exec: (passed, its last output line or exit status)."""
        api = self.backend.client.api
        try:
            created = await self.backend.call(api.exec_create, self.containers[name], check.test, what="health check")
            output = await self.backend.call(api.exec_start, created["Id"], timeout=check.timeout, what="health check")
            code = (await self.backend.call(api.exec_inspect, created["Id"], what="health check")).get("ExitCode")
        except SandboxError as exc:
            return False, exc.message
        text = output.decode("utf-8", errors="replace").strip().splitlines()
        line = text[-1][:200] if text else ""
        return code == 0, f"exit {code}" + (f": {line}" if line else "")

    async def _stopped(self, name: str, state: dict[str, Any]) -> SandboxError:
        tail = await self.backend.call(self.backend.logs_tail, self.containers[name], what=f"logs of {name}")
        last = tail.strip().splitlines()[-1][:200] if tail.strip() else "no output"
        return SandboxError(f"compose service {name} exited with code {state.get('ExitCode')} at start: {last}",
                            hint="its full output: the error details; a service must keep running (or complete "
                                 "successfully when others wait for that)")

    async def down(self) -> None:
        """Remove every container, volume and the network; errors are collected, then raised."""
        failures: list[str] = []
        for name, container_id in reversed(list(self.containers.items())):
            if name == MAIN:
                continue  # the sandbox removes its own container first
            try:
                await self.backend.call(self.backend.remove_container, container_id, what=f"remove service {name}")
            except SandboxError as exc:
                failures.append(exc.message)
        self.containers.clear()
        for volume in self.volumes:
            try:
                await self.backend.call(self.backend.remove_volume, volume, what=f"remove volume {volume}")
            except SandboxError as exc:
                failures.append(exc.message)
        self.volumes.clear()
        try:
            await self.backend.call(self.backend.remove_network, self.network, what="remove network")
        except SandboxError as exc:
            failures.append(exc.message)
        if self.guard is not None:
            await asyncio.to_thread(self.guard.remove)
        if failures:
            raise SandboxError(f"tearing down the compose services failed: {failures[0]}")


class HostGuard:
    """INPUT rules that keep an attempt's bridge from reaching the host's own services (everything
    but DNS to the engine's resolver on the gateway is dropped), on IPv4 and IPv6."""

    RULES = (("iptables", ["-p", "udp", "--dport", "53", "-j", "ACCEPT"]),
             ("iptables", ["-p", "tcp", "--dport", "53", "-j", "ACCEPT"]),
             ("iptables", ["-j", "DROP"]), ("ip6tables", ["-j", "DROP"]))

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self.applied: list[tuple[str, list[str]]] = []

    @staticmethod
    def unavailable() -> str:
        """"" when rules can be added here, else why not."""
        from .podman import docker_host

        if not docker_host().startswith("unix://"):
            return "the engine is remote (DOCKER_HOST is not a unix socket)"
        if os.geteuid() != 0:
            return "not root"
        if shutil.which("iptables") is None:
            return "iptables is not installed"
        return ""

    def apply(self) -> Protection:
        why = self.unavailable()
        if not why:
            # Inserted at the top in reverse, so they end up in RULES order, before any ACCEPT.
            for tool, rule in reversed(self.RULES):
                if shutil.which(tool) is None:
                    continue
                proc = subprocess.run([tool, "-w", "5", "-I", "INPUT", "-i", self.interface, *rule],
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    why = f"{tool} failed: {(proc.stderr or proc.stdout).strip()[:120]}"
                    break
                self.applied.append((tool, rule))
        if why:
            self.remove()
            return Protection(name="compose host guard", active=False,
                              detail=f"services could reach the host's own listening services through the "
                                     f"network's gateway ({why})")
        return Protection(name="compose host guard", active=True,
                          detail="compose networks cannot reach the host's services (iptables INPUT drop but DNS)")

    def remove(self) -> None:
        for tool, rule in self.applied:
            subprocess.run([tool, "-w", "5", "-D", "INPUT", "-i", self.interface, *rule], capture_output=True)
        self.applied.clear()

    @classmethod
    def remove_stale(cls, interface: str) -> None:
        """Drop the rules a dead process left for ``interface`` (each may be absent)."""
        guard = cls(interface)
        guard.applied = [(tool, rule) for tool, rule in cls.RULES if shutil.which(tool)]
        guard.remove()
