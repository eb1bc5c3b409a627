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

What is refused (one line each with what works instead) and what is ignored with a note: ``_REFUSED``
and ``_IGNORED`` below (privileged containers, host namespaces and bind mounts; published ports).

This module reads a task's compose file into a ``ComposeSpec`` (compose_spec.py); compose_group.py
runs one.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ..errors import BuildError, MissingPrerequisite, UnsupportedDockerfile
from ..tasks import Task
from ..tasks.task import compose_file
from .compose_spec import CONDITIONS, HARBOR_MOUNT, MAIN, MAIN_IMAGE, BuildSpec, ComposeSpec, Healthcheck, Service

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
# A main command that only keeps the container alive (Harbor's is ``sleep infinity``).
_KEEPALIVE = re.compile(r"(?:(?:/bin/)?(?:ba)?sh -c )?(?:sleep (?:infinity|inf|\d{5,})|tail -f /dev/null)")
_VAR = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


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
        externals = {"volume": "declare it without `external` (a fresh volume per attempt)",
                     "network": "drop the network: every service shares the attempt's private network"}
        for kind, hint in externals.items():
            for name, body in (doc.get(f"{kind}s") or {}).items():
                if isinstance(body, dict) and body.get("external"):
                    raise self.refuse(f"{kind} {name} is external", hint)
        self.named_volumes.update(str(name) for name in doc.get("volumes") or {})
        if doc.get("networks"):
            self.notes.append("networks: every service shares one private network per attempt")
        services: dict[str, Service] = {}
        for name, body in (doc.get("services") or {}).items():
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
            if (value := body.get(key)) is not None:
                fields[key] = shlex.split(value) if isinstance(value, str) else [str(v) for v in _listify(value)]
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
        fields["copies"], fields["volumes"] = self._mounts(name, body.get("volumes"))
        service = Service(**fields)
        if name == MAIN:
            self._check_main(service, body)
        return service

    def _check_main(self, main: Service, body: dict[str, Any]) -> None:
        """The sandbox runs its own init as main's command (after the image's ENTRYPOINT), as
        Harbor's ``sleep infinity`` does; a command that only keeps main alive is that."""
        if main.command is not None and not _KEEPALIVE.fullmatch(" ".join(main.command)):
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
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def _mapping(value: Any, what: str) -> dict[str, str]:
    """A compose mapping given as a dict or as a ``KEY=VALUE`` list; values become strings (a key
    without a value is left out: compose would take it from the host, which we never read)."""
    if value is None:
        return {}
    if isinstance(value, dict):
        return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return {k: v for k, eq, v in (str(item).partition("=") for item in value) if eq}
    raise BuildError(f"{what} must be a mapping or a list of KEY=VALUE")


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
