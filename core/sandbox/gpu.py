"""NVIDIA GPUs on this machine: what is there, and how a sandbox gets them.

Detection only looks: the device nodes under /dev (``/dev/nvidia0``.. one per GPU, plus the control
nodes the driver needs) and, when ``nvidia-smi`` exists, its one-line-per-GPU listing for the models
("NVIDIA H100 80GB HBM3"). The dev directory and the listing are arguments so the parsing is tested
without a GPU. Passthrough: bwrap binds the device nodes (``--dev-bind``) and the driver's user-space
libraries (read-only, at the same paths); docker asks the engine for the devices
(``DeviceRequest(count=n, capabilities=[["gpu"]])``). Without a GPU here, only detection and the argv
are tested; the passthrough itself is exercised on a GPU machine.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

CONTROL_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-modeset")
# Where distributions put the driver's user-space libraries (libcuda, libnvidia-ml, ...).
LIBRARY_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib")
LIBRARY_GLOBS = ("libcuda.so*", "libnvidia-*.so*", "libnvcuvid.so*")
_GPU_NODE = re.compile(r"^nvidia(\d+)$")
_SMI_LINE = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?$")
SMI_TIMEOUT_SEC = 10.0


class GpuInventory(BaseModel):
    """The GPUs a sandbox could be given here: device nodes, models (empty when unknown), libraries."""

    model_config = ConfigDict(frozen=True)

    devices: tuple[str, ...] = ()  # /dev/nvidiaN, one per GPU
    control: tuple[str, ...] = ()  # /dev/nvidiactl, /dev/nvidia-uvm, ... (those present)
    models: tuple[str, ...] = ()  # from nvidia-smi -L, in GPU order
    libraries: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.devices)


def gpu_type_matches(wanted: str, model: str) -> bool:
    """Whether a task's ``gpu_types`` entry names ``model``: "H100" and "h100-80gb" name
    "NVIDIA H100 80GB HBM3" (case, spaces and punctuation ignored)."""
    key = re.sub(r"[^a-z0-9]", "", wanted.lower())
    return bool(key) and key in re.sub(r"[^a-z0-9]", "", model.lower())


def parse_smi_listing(text: str) -> tuple[str, ...]:
    """GPU models from ``nvidia-smi -L`` output, in GPU order."""
    found = sorted((int(m.group(1)), m.group(2).strip()) for line in text.splitlines()
                   if (m := _SMI_LINE.match(line.strip())))
    return tuple(name for _, name in found)


def detect_gpus(dev: Path = Path("/dev"), *, smi_listing: str | None = None,
                library_dirs: tuple[str, ...] = LIBRARY_DIRS) -> GpuInventory:
    """The NVIDIA GPUs visible under ``dev``. ``smi_listing`` is nvidia-smi -L's output (default: ask
    nvidia-smi when GPU nodes exist and it is installed)."""
    try:
        names = sorted(p.name for p in dev.iterdir())
    except OSError:
        return GpuInventory()
    numbered = sorted((int(m.group(1)), n) for n in names if (m := _GPU_NODE.match(n)))
    if not numbered:
        return GpuInventory()
    if smi_listing is None:
        smi_listing = _smi_listing()
    libraries = tuple(sorted({str(p) for d in library_dirs for g in LIBRARY_GLOBS for p in Path(d).glob(g)
                              if p.is_file()}))
    return GpuInventory(devices=tuple(str(dev / n) for _, n in numbered),
                        control=tuple(str(dev / n) for n in CONTROL_NODES if n in names),
                        models=parse_smi_listing(smi_listing), libraries=libraries)


@lru_cache(maxsize=1)
def host_gpus() -> GpuInventory:
    """This machine's GPUs, detected once per process (hardware does not change under us)."""
    return detect_gpus()


def _smi_listing() -> str:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return ""
    try:
        return subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=SMI_TIMEOUT_SEC).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def bwrap_gpu_args(inventory: GpuInventory, count: int) -> list[str]:
    """bwrap arguments that give a sandbox the first ``count`` GPUs: their device nodes and the control
    nodes (``--dev-bind``, after ``--dev /dev``), and the driver libraries read-only at their paths."""
    if count <= 0 or not inventory.devices:
        return []
    nodes = [arg for node in (*inventory.devices[:count], *inventory.control) for arg in ("--dev-bind", node, node)]
    return nodes + [arg for lib in inventory.libraries for arg in ("--ro-bind", lib, lib)]


def docker_device_requests(count: int) -> list[object]:
    """``device_requests`` for ``containers.create``: ``count`` GPUs through the engine's NVIDIA
    support (the NVIDIA container toolkit or CDI)."""
    from docker.types import DeviceRequest

    return [DeviceRequest(count=count, capabilities=[["gpu"]])] if count > 0 else []


def engine_gpu_support(info: dict[str, object]) -> bool:
    """Whether a Docker-API engine's ``/info`` says it can hand out NVIDIA GPUs: an ``nvidia``
    runtime (the NVIDIA container toolkit), or NVIDIA devices among the CDI devices it discovered."""
    runtimes = info.get("Runtimes")
    if isinstance(runtimes, dict) and "nvidia" in runtimes:
        return True
    devices = info.get("DiscoveredDevices")
    return isinstance(devices, list) and any("nvidia.com/gpu" in str(d) for d in devices)
