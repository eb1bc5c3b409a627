"""``autoenvscaling doctor``: what this machine can run, and how to fix what it cannot.

Every fact is probed, never assumed: a sandbox protection is reported active only when the backend
itself says so; optional packages are looked up without being imported (importing torch alone takes
seconds). What plugins need (a browser, Ray, an engine, a GPU) they register as prerequisites
(``autoenvscaling_register_prerequisites``); the doctor runs those checks and lists them under
``prerequisites``. Exit status: 0 when at least one sandbox backend can run tasks here, 3 when none can.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..plugins.host import PluginHost

# (command, what needs it, install hint)
TOOLS = [
    ("bwrap", "the bwrap sandbox backend", "apt-get install bubblewrap"),
    ("setpriv", "starting sandboxes as an unprivileged uid", "apt-get install util-linux"),
    ("mmdebstrap", "building the local Debian base root filesystem", "apt-get install mmdebstrap"),
    ("podman", "a local Docker-API engine (docker backend, tests)", "apt-get install podman runc"),
    ("runc", "podman on hybrid cgroups (crun refuses them)", "apt-get install runc"),
]
# module -> the pip extra that provides it. What a plugin needs (a browser, Ray, a GPU) it reports itself
# through autoenvscaling_register_prerequisites: the doctor knows none of it.
OPTIONAL_PACKAGES = {
    "docker": "autoenvscaling[docker]",
    "openai": "autoenvscaling[llm]",
    "transformers": "autoenvscaling[local]",
    "llama_cpp": "autoenvscaling[serve] (compiles llama.cpp; scripts/bootstrap.sh does it)",
    "torch": "torch==2.13.0 (install it first: a plain `torch` pulls a CUDA build)",
    "pyarrow": "autoenvscaling[export]",
    "datasets": "autoenvscaling[test]",
}
EXIT_NOTHING_RUNS = 3
LOW_DISK_BYTES = 5 << 30


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def doctor(as_json: bool) -> None:
    """Check this machine: sandboxes, engines, protections, tools, packages, cache."""
    report = collect()
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        _print(report)
    if not report["can_run_tasks"]:
        sys.exit(EXIT_NOTHING_RUNS)


def collect(host: PluginHost | None = None) -> dict[str, Any]:
    """Every check, as one JSON-friendly dict (the --json output), over ``host``'s plugins (default:
    a fail-soft host of everything installed)."""
    from ..sandbox.prerequisites import docker_engine

    host, plugins = _plugins(host)
    backends = _backends(host)
    return {
        "can_run_tasks": any(b["available"] for b in backends),
        "python": {"version": platform.python_version(), "executable": sys.executable,
                   "ok": sys.version_info >= (3, 11)},
        "plugins": plugins,
        "domains": [{"name": e.name, "plugin": e.plugin} for e in host.domains.entries()],
        "sandbox_backends": backends,
        "tools": [_tool(*t) for t in TOOLS],
        "docker_engine": docker_engine(),
        "cgroups": cgroup_layout(),
        "verifier_runtime": _verifier_runtime(),
        "cache": _cache(),
        "base_images": _base_images(),
        "optional_packages": [{"name": n, "found": _find_spec(n), "provided_by": extra}
                              for n, extra in OPTIONAL_PACKAGES.items()],
        "prerequisites": _prerequisites(host),
    }


def _prerequisites(host: PluginHost) -> list[dict[str, Any]]:
    """Every registered prerequisite check, run once; one that cannot load or raises is a failed row."""
    from ..errors import AESError
    from ..plugins.prerequisites import PrerequisiteReport, run_check

    rows = []
    for entry in host.prerequisites.entries():
        try:
            report = run_check(entry.name, entry.plugin, host.prerequisites.get(entry.name))
        except AESError as exc:  # its module is missing: the plugin's installation is the finding
            report = PrerequisiteReport(name=entry.name, plugin=entry.plugin, needed_for=entry.description, ok=False,
                                        detail=exc.message, hint=exc.hint)
        rows.append(report.model_dump(mode="json"))
    return rows


def _plugins(host: PluginHost | None) -> tuple[PluginHost, dict[str, Any]]:
    from ..plugins import create_host
    from ..plugins.host import PluginWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)  # reported below instead
        if host is None:
            host = create_host(strict=False)  # the doctor reports broken plugins, it does not stop at them
        infos = host.plugins()
    return host, {
        "loaded": [{"name": p.name, "distribution": p.distribution, "version": p.version} for p in infos],
        "problems": [{"plugin": p.plugin, "distribution": p.distribution, "message": p.message} for p in host.problems],
    }


def _backends(host: Any) -> list[dict[str, Any]]:
    from ..errors import AESError

    out = []
    for entry in host.sandbox_backends.entries():
        row: dict[str, Any] = {"name": entry.name, "plugin": entry.plugin, "available": False, "detail": "",
                               "protections": []}
        out.append(row)
        try:
            cls = host.sandbox_backends.get(entry.name)
            ok, why = cls.available()
        except AESError as exc:
            row["detail"] = exc.message + (f" ({exc.hint})" if exc.hint else "")
            continue
        except Exception as exc:  # a broken backend is a finding, not a crash of the doctor
            row["detail"] = f"available() raised {type(exc).__name__}: {exc}"
            continue
        row["available"], row["detail"] = bool(ok), why or ""
        if not ok:
            continue  # a backend that cannot run protects nothing: list no protections for it
        try:
            protections = cls().protections()
            row["protections"] = [{"name": p.name, "active": bool(p.active), "detail": p.detail} for p in protections]
        except Exception as exc:
            row["protections_error"] = f"{type(exc).__name__}: {exc}"
    return out


def _tool(command: str, needed_for: str, hint: str) -> dict[str, Any]:
    path = shutil.which(command)
    row = {"name": command, "found": path is not None, "path": path, "version": None, "needed_for": needed_for,
           "hint": None if path else hint}
    if path:
        try:
            proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5)
            lines = (proc.stdout or proc.stderr).strip().splitlines()
            row["version"] = lines[0] if lines else None
        except (OSError, subprocess.TimeoutExpired):
            pass
    return row


def cgroup_layout(mounts: str | None = None) -> dict[str, Any]:
    """Which cgroup hierarchies exist here and which controllers we could use to limit sandboxes."""
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text()
        except OSError:
            mounts = ""
    v1: dict[str, dict[str, Any]] = {}
    v2_mount = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        mountpoint, fstype, options = fields[1], fields[2], fields[3].split(",")
        if fstype == "cgroup2":
            v2_mount = mountpoint
        elif fstype == "cgroup":
            for controller in ("memory", "pids", "cpu"):
                if controller in options:
                    v1[controller] = {"mount": mountpoint, "writable": os.access(mountpoint, os.W_OK)}
    v2_controllers: list[str] = []
    cgroup_kill = False
    if v2_mount:
        try:
            v2_controllers = (Path(v2_mount) / "cgroup.controllers").read_text().split()
        except OSError:
            pass
        # cgroup.kill exists only in non-root cgroups: look in ours, else in any child of the root.
        own = Path(v2_mount) / (_own_v2_cgroup() or "/").lstrip("/")
        cgroup_kill = (own / "cgroup.kill").exists() or any(Path(v2_mount).glob("*/cgroup.kill"))
    layout = ("hybrid" if v1 and v2_mount else "legacy (v1)" if v1 else "unified (v2)" if v2_mount else "none")
    return {"layout": layout, "v1_controllers": v1, "v2_mount": v2_mount, "v2_controllers": v2_controllers,
            "cgroup_kill": cgroup_kill}


def _own_v2_cgroup() -> str | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    except OSError:
        pass
    return None


def _verifier_runtime() -> dict[str, Any]:
    """Whether the offline verifier runtime's package sets are provisioned and its own Python is built
    (a check, never a download or a build)."""
    if not _find_spec("autoenvscaling.runtime.offline"):
        return {"state": "not part of this installation"}
    from ..runtime import offline

    provisioned: set[tuple[str, ...]] = set()
    for manifest in sorted((offline.verifier_cache() / "sets").glob("*/manifest.json")):
        try:
            provisioned.add(tuple(sorted(json.loads(manifest.read_text()).get("specs", []))))
        except (OSError, ValueError):
            continue
    sets = [{"packages": list(specs), "provisioned": tuple(sorted(specs)) in provisioned}
            for specs in offline.configured_sets()]
    state = "provisioned" if all(s["provisioned"] for s in sets) else "not provisioned yet"
    return {"state": state, "cache": str(offline.verifier_cache()), "sets": sets,
            "hint": None if state == "provisioned" else
            "provisioned on first verification (needs PyPI once, or AUTOENVSCALING_WHEELHOUSE)",
            "python": _verifier_python(offline)}


def _verifier_python(offline: Any) -> dict[str, Any]:
    """The runtime's own Python (what uvx runs on in images without python3): built here or not."""
    from ..errors import AESError

    row: dict[str, Any] = {"version": offline.PYTHON_VERSION, "suite": offline.PYTHON_SUITE, "built": False,
                           "path": None, "bytes": None, "hint": None}
    try:
        path = offline.provided_python(build=False)
    except AESError as exc:
        hints = [exc.hint] if exc.hint else []
        if not shutil.which("mmdebstrap"):
            hints.append("apt-get install mmdebstrap")
        row["hint"] = "; ".join(hints) or None
        return row
    row.update(built=True, path=str(path), bytes=sum(f.stat().st_size for f in path.rglob("*") if f.is_file()))
    return row


def _cache() -> dict[str, Any]:
    from ..config import cache_dir

    path = cache_dir()
    free = shutil.disk_usage(path).free
    return {"dir": str(path), "free_bytes": free, "low": free < LOW_DISK_BYTES,
            "hint": "set AUTOENVSCALING_CACHE to a bigger disk" if free < LOW_DISK_BYTES else None}


def _base_images() -> list[dict[str, Any]]:
    """The known FROM images, the local base each maps to, what that base holds beyond a Debian
    minbase root, what differs from the real image (the note), and whether the base is built here."""
    from ..sandbox.rootfs import BASES, KNOWN_IMAGES, base_rootfs_built

    built = {name for name in BASES if base_rootfs_built(name)}
    rows = []
    for images, base, note in KNOWN_IMAGES:
        names = [b.strip() for b in base.replace(" or ", "/").split("/")]
        specs = [BASES[n] for n in names if n in BASES]
        contents = "; ".join(dict.fromkeys(f"Debian {s.suite} minbase" + (f" + {', '.join(s.packages)}" if s.packages
                                                                           else "") for s in specs))
        rows.append({"images": images, "base": base, "contents": contents or None, "note": note,
                     "built": any(n in built for n in names)})
    return rows


def _find_spec(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _print(report: dict[str, Any]) -> None:
    def line(ok: bool | None, text: str, hint: str | None = None) -> None:
        mark = {True: "ok  ", False: "--  ", None: "    "}[ok]
        click.echo(f"  {mark}{text}" + (f"\n        hint: {hint}" if hint else ""))

    py = report["python"]
    click.echo("python")
    line(py["ok"], f"{py['version']} ({py['executable']})", None if py["ok"] else "autoenvscaling needs Python >= 3.11")
    click.echo("plugins")
    for p in report["plugins"]["loaded"]:
        line(True, f"{p['name']} ({p['distribution'] or 'in-process'} {p['version'] or ''})".rstrip())
    for p in report["plugins"]["problems"]:
        line(False, f"{p['plugin']} ({p['distribution'] or 'in-process'}) skipped: {p['message']}")
    line(None, "domains: " + (", ".join(d["name"] for d in report["domains"]) or "none installed"))
    click.echo("sandbox backends")
    for b in report["sandbox_backends"]:
        line(b["available"], f"{b['name']}: {'available' if b['available'] else 'unavailable'}"
             + (f" ({b['detail']})" if b["detail"] else ""))
        for p in b["protections"]:
            click.echo(f"          {'active  ' if p['active'] else 'INACTIVE'} {p['name']}"
                       + (f": {p['detail']}" if p["detail"] else ""))
        if b.get("protections_error"):
            click.echo(f"          protections unknown: {b['protections_error']}")
    click.echo("tools")
    for t in report["tools"]:
        line(t["found"], f"{t['name']}: {t['version'] or t['path'] or 'not found'}  [{t['needed_for']}]", t["hint"])
    engine = report["docker_engine"]
    click.echo("docker engine")
    line(engine["reachable"], f"{engine['host']}: {engine['version'] or engine['detail']}", engine["hint"])
    cg = report["cgroups"]
    click.echo("cgroups")
    v1 = ", ".join(f"{c}{'' if v['writable'] else ' (read-only)'}" for c, v in cg["v1_controllers"].items())
    line(None, f"layout {cg['layout']}; v1: {v1 or 'none'}; v2 controllers: "
               f"{', '.join(cg['v2_controllers']) or 'none'}; cgroup.kill: {'yes' if cg['cgroup_kill'] else 'no'}")
    vr = report["verifier_runtime"]
    click.echo("offline verifier runtime")
    line(vr["state"] == "provisioned", vr["state"], vr.get("hint"))
    py = vr.get("python")
    if py:
        line(py["built"] or None, f"own Python {py['version']} (Debian {py['suite']}, for images without python3): "
             + (f"built, {py['bytes'] / 2**20:.1f} MiB" if py["built"] else "not built yet"), py["hint"])
    cache = report["cache"]
    click.echo("cache")
    line(not cache["low"], f"{cache['dir']}: {cache['free_bytes'] / 2**30:.1f} GiB free", cache["hint"])
    click.echo("base images (FROM -> local base; built here: ok)")
    for row in report["base_images"]:
        holds = f" [{row['contents']}]" if row["contents"] else ""
        line(row["built"] or None, f"{row['images']} -> {row['base']}{holds}: {row['note']}")
    click.echo("optional packages")
    for p in report["optional_packages"]:
        line(p["found"], p["name"] + ("" if p["found"] else f": not installed ({p['provided_by']})"))
    click.echo("prerequisites (registered by plugins)")
    for p in report["prerequisites"]:
        line(p["ok"], f"{p['name']} ({p['plugin']}): {p['detail'] or ('ok' if p['ok'] else 'missing')}"
                      f"  [{p['needed_for']}]", p["hint"])
    if not report["can_run_tasks"]:
        click.echo("no sandbox backend can run tasks here: see the hints above", err=True)
