"""A compose environment as the docker backend runs it (``ComposeSpec``, its services and their
healthchecks): what compose.py reads from a task's compose file and compose_group.py starts."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import BuildError

MAIN = "main"
MAIN_IMAGE = "\0main-image"  # what ${MAIN_IMAGE_NAME} stands for: the task's own image
HARBOR_MOUNT = "\0harbor-mount"  # a host log folder of Harbor's; our runner handles /logs itself
CONDITIONS = ("service_started", "service_healthy", "service_completed_successfully")
START_TIMEOUT = 300.0  # the longest a service may take to become healthy or complete


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
