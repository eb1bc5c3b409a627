"""What a build step needs to reach the package registries the way the host does.

Hosts often reach PyPI, Debian or npm through a proxy, sometimes one that intercepts TLS with its own
CA. A fresh base root trusts neither. So every RUN step that has the network gets the host's CA
bundle, proxy variables and pip index settings for that step only (BuildKit-style secrets): the CA
bundle is bind-mounted read-only under /dev (a tmpfs of the step, never part of a layer) and the
variables are set in the step's environment, not in the image's. Nothing of it is baked in, and none
of it is part of a layer's cache key (a rotated CA does not rebuild every image).
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

BUILD_DIR = "/dev/.autoenvscaling-build"
CA_TARGET = f"{BUILD_DIR}/ca-certificates.crt"
FIND_LINKS_TARGET = f"{BUILD_DIR}/find-links"  # the host's local wheel directories, /0, /1, ...
APT_TARGET = f"{BUILD_DIR}/apt.conf"
APT_PROXY_KEYS = ("Acquire::http::Proxy", "Acquire::https::Proxy")
# Where tools look for a CA bundle when told by the environment.
CA_VARIABLES = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
                "NODE_EXTRA_CA_CERTS")
PROXY_VARIABLES = ("http_proxy", "https_proxy", "no_proxy", "all_proxy", "ftp_proxy")
PIP_VARIABLES = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "UV_INDEX_URL",
                 "UV_EXTRA_INDEX_URL", "NPM_CONFIG_REGISTRY")
HOST_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem")


# What tools print when a host they need is out of reach (curl, wget, git, pip, npm, apt, Python,
# Go, a proxy refusing the tunnel). A build step fails on the first such line; what follows it
# ("fatal: not a git repository", "exit status 128") is a consequence.
_UNREACHABLE = re.compile(
    r"could not resolve (host|proxy)|temporary failure (in name resolution|resolving)|name or service not known|"
    r"unable to resolve host|failed to connect to|network is unreachable|no route to host|connection refused|"
    r"failed to establish a new connection|getaddrinfo|\b(enotfound|econnrefused|eai_again|etimedout)\b|"
    r"tunnel failed|from proxy after connect|proxy.{0,40}\b403\b|\b403 forbidden|connection timed out|"
    r"unable to access '(https?|git)://|dial tcp", re.IGNORECASE)
NETWORK_HINT = ("build steps here reach only the package registries (PyPI, Debian, npm): vendor what the step "
                "downloads into environment/ and COPY it, or install it with pip, apt-get or npm")


def unreachable_line(output: str) -> str | None:
    """The first line of a build step's output that says a host was out of reach, or None."""
    for line in output.splitlines():
        if _UNREACHABLE.search(line):
            return " ".join(line.split())[:300]
    return None


@dataclass(frozen=True)
class BuildNetwork:
    """Read-only binds (host path, sandbox path) and environment for one networked build step."""

    binds: tuple[tuple[str, str], ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def host_ca_bundle(environ: dict[str, str] | None = None) -> str | None:
    """The CA bundle the host's tools trust: SSL_CERT_FILE / REQUESTS_CA_BUNDLE when set, else the
    distribution's bundle."""
    environ = dict(os.environ if environ is None else environ)
    for candidate in (environ.get("SSL_CERT_FILE"), environ.get("REQUESTS_CA_BUNDLE"), *HOST_BUNDLES):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def host_apt_proxies() -> dict[str, str]:
    """The host's apt proxy settings (Acquire::http::Proxy, ...), when apt is configured with any."""
    if shutil.which("apt-config") is None:
        return {}
    found = {}
    for key in APT_PROXY_KEYS:
        try:
            out = subprocess.run(["apt-config", "dump", key], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.TimeoutExpired):
            return {}
        for line in out.splitlines():  # Acquire::http::Proxy "http://proxy:3128/";
            name, _, value = line.partition(" ")
            if name == key and (value := value.strip().strip(";").strip('"')):
                found[key] = value
    return found


def host_find_links(environ: dict[str, str] | None = None) -> list[str]:
    """The local wheel directories the host's pip searches (``find-links``: PIP_FIND_LINKS, then the
    pip configuration files that ``environ`` locates), in order. A host that keeps some wheels on disk
    (a CPU build of torch, where the index only has the CUDA one) builds images with the same ones."""
    environ = dict(os.environ if environ is None else environ)
    entries = environ.get("PIP_FIND_LINKS", "").split()
    home = environ.get("HOME")
    files = [environ.get("PIP_CONFIG_FILE", "")]
    files += [f"{d}/pip/pip.conf" for d in environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":") if d]
    files.append("/etc/pip.conf")
    if home:
        files += [f"{environ.get('XDG_CONFIG_HOME') or home + '/.config'}/pip/pip.conf", f"{home}/.pip/pip.conf"]
    for name in files:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(name, encoding="utf-8")
        except (OSError, configparser.Error):
            continue
        for section in ("global", "install"):
            entries += parser.get(section, "find-links", fallback="").split()
    paths = [entry.removeprefix("file://") for entry in entries]
    return list(dict.fromkeys(path for path in paths if path.startswith("/") and Path(path).is_dir()))


def _published(data: bytes, suffix: str, where: Path) -> str:
    """``data`` as a read-only file named by its hash under ``where``. bwrap binds it by path as the
    sandbox uid, so it must live where that uid can reach it (not under root's home)."""
    path = where / f"{hashlib.sha256(data).hexdigest()[:16]}{suffix}"
    if not path.exists():
        where.mkdir(parents=True, exist_ok=True)
        os.chmod(where, 0o711)
        tmp = where / f".{path.name}.{os.getpid()}.tmp"
        tmp.write_bytes(data)
        os.chmod(tmp, 0o644)
        tmp.rename(path)
    return str(path)


def _apt_conf(bundle: bool, proxies: dict[str, str]) -> bytes | None:
    """apt settings for a build step: the CA for https sources and the host's proxies."""
    lines = [f'Acquire::https::CAInfo "{CA_TARGET}";'] if bundle else []
    lines += [f'{key} "{value}";' for key, value in sorted(proxies.items())]
    return ("// Written by autoenvscaling for build steps only\n" + "\n".join(lines) + "\n").encode() if lines else None


def host_build_network(environ: dict[str, str] | None = None, *, where: Path | None = None,
                       publish: bool = True) -> BuildNetwork:
    """The host's CA bundle, proxies and index settings, as a build step should see them.
    Index URLs that name host files (file://) are left out: those paths do not exist in a sandbox.
    The host's local ``find-links`` directories are bound read-only (bwrap only) and named in
    PIP_FIND_LINKS.

    ``publish`` (bwrap): the bundle and an apt configuration are published where the sandbox uid can
    bind them (under the run directory, root only). Without it (a container engine, which gets the
    bundle's bytes in its build context, as any user) the bind names the host's own bundle and apt
    gets no file of its own: it honours the proxy variables, and engines mount nothing else."""
    environ = dict(os.environ if environ is None else environ)
    if publish and where is None:
        from .isolation import run_dir

        where = run_dir().parent / "buildnet"
    env: dict[str, str] = {}
    binds: list[tuple[str, str]] = []
    bundle = host_ca_bundle(environ)
    if bundle:
        source = _published(Path(bundle).read_bytes(), ".crt", where) if where is not None else bundle
        binds.append((source, CA_TARGET))
        env.update({name: CA_TARGET for name in CA_VARIABLES})
    apt = _apt_conf(bool(bundle), host_apt_proxies()) if where is not None else None
    if apt and where is not None:
        binds.append((_published(apt, ".conf", where), APT_TARGET))
        env["APT_CONFIG"] = APT_TARGET
    env.update({v: environ[v] for name in PROXY_VARIABLES for v in (name, name.upper()) if environ.get(v)})
    for name in PIP_VARIABLES:
        value = environ.get(name, "")
        kept = " ".join(part for part in value.split() if not part.startswith("file:"))
        if kept:
            env[name] = kept
    if where is not None:  # bwrap binds the host's wheel directories read-only; engines mount nothing
        links = [(path, f"{FIND_LINKS_TARGET}/{i}") for i, path in enumerate(host_find_links(environ))]
        binds += links
        if links:
            env["PIP_FIND_LINKS"] = " ".join(target for _, target in links)
    return BuildNetwork(binds=tuple(binds), env=env)
