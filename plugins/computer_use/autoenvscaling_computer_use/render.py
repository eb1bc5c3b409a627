"""Turn a family's ``Draft`` into a Harbor task (a core ``Task``).

    task.toml                  browser = true and tools = ["browser"] in [metadata.autoenvscaling.*];
                               [verifier] environment_mode = "shared" (it asks the running app);
                               [environment.healthcheck]: the app and the browser service answer
    instruction.md             what a person would ask
    environment/Dockerfile     the domain-wide preamble (Debian's Chromium, Python, Playwright; identical
                               in every task, so it is built once) + the apps + this task's seed data
    environment/aes/...        the web-app framework, every app, the browser service and its client
    environment/seed.sql       the app's data for this task (schema and rows)
    environment/state.key      the state interface's key: read and deleted by the app at start
    tests/test.sh              runs tests/verify.py (python3 -I)
    tests/verify.py            reads the app's state through the state interface and scores it
    tests/aes_verifier.py      the verifier library verify.py imports (autoenvscaling.verifier)
    tests/spec.json            hidden: the requirements, the seed's digest
    tests/seed.sql, state.key  the baseline the verifier diffs against, and the key it asks with
    solution/solve.sh          runs solution/solve.py, a Playwright script through the UI
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from importlib import resources

from autoenvscaling.api import Task, TaskFile, label_of, package_reader, qualified_name, render_task, verifier_library

from .families.base import Draft

DOMAIN = "computer_use"
PORT = 8080
PLAYWRIGHT_VERSION = "1.65.2"
PREAMBLE = (
    "FROM debian:bookworm\n"
    "ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1\n"
    "# Debian's Chromium as its headless shell (never a downloaded browser); libatomic1 for Playwright's driver\n"
    "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\\n"
    "    python3 python3-pip chromium-headless-shell libatomic1 fonts-dejavu-core ca-certificates curl \\\n"
    "    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb\n"
    f"RUN python3 -m pip install --break-system-packages playwright=={PLAYWRIGHT_VERSION}\n"
    "# node's compile cache, filled once here: every Playwright driver an attempt starts (the browser\n"
    "# service's, a script's) reads its bundles' compiled code instead of compiling them again\n"
    "ENV NODE_COMPILE_CACHE=/opt/aes/node-cache\n"
    "RUN python3 -c 'from playwright.sync_api import sync_playwright; sync_playwright().start().stop()' \\\n"
    "    && chmod -R a+rX /opt/aes/node-cache\n"
    "COPY aes/ /opt/aes/\n"
    "RUN install -m 0755 /opt/aes/aes-browser /usr/local/bin/aes-browser && chmod 0755 /opt/aes/entrypoint.sh\n"
)
IMAGE_FILES = ("webapp.py", "browser.py", "entrypoint.sh", "aes-browser")
STATE_SOCKET = "/run/aes-app/state.sock"
#: The verifier's outputs ([metadata.autoenvscaling.verifier]; Harbor runs the verifier in the agent's
#: container, since a separate one would hold a fresh app): what the verifier needs of the attempt beyond the pristine image. Only the state
#: interface's socket: the app (started by the ENTRYPOINT, still running) binds it at start, so it is a
#: runtime file the view would otherwise put back (remove). The app's data is read through it; the
#: mirror file, the logs and everything else the agent changed are put back to the image's state.
VERIFIER_OUTPUTS = [STATE_SOCKET]
#: [environment.healthcheck]: the app has taken its key and listens, the browser service's socket is
#: there. The ENTRYPOINT waits for the same before it runs the container's command, so the first try
#: passes; declaring it lets the runtime start the agent then instead of watching the entrypoint.
HEALTHCHECK = {
    "command": ("test -S /run/aes-browser/browser.sock && test ! -e /etc/aes-app/state.key "
                f"&& grep -q ':{PORT:04X} 00000000:0000 0A' /proc/net/tcp"),
    "interval_sec": 0.5, "timeout_sec": 10.0, "start_period_sec": 30.0, "start_interval_sec": 0.1, "retries": 3,
}


package_text = package_reader(__package__)


def app_modules() -> list[str]:
    """The file names of image/aes_apps/: one module per app, and the modules they share (_*.py)."""
    folder = resources.files(__package__).joinpath("image", "aes_apps")
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".py"))


def app_names() -> list[str]:
    return [name[:-3] for name in app_modules() if not name.startswith("_")]


def image_files() -> dict[str, str]:
    """environment/aes/: the framework, the browser service and every app (one cached layer for all)."""
    files = {f"environment/aes/{rel}": package_text("image", *rel.split("/")) for rel in IMAGE_FILES}
    for name in app_modules():
        files[f"environment/aes/aes_apps/{name}"] = package_text("image", "aes_apps", name)
    return files


def dockerfile(app: str) -> str:
    return (PREAMBLE + f"ENV AES_APP={app} AES_PORT={PORT}\n"
            "COPY seed.sql /opt/aes/seed.sql\n"
            "COPY state.key /etc/aes-app/state.key\n"
            "WORKDIR /root\n"
            'ENTRYPOINT ["/opt/aes/entrypoint.sh"]\n')


#: set (by the proposer kit) to derive keys from a published secret instead of this machine's
_SECRET_OVERRIDE: contextvars.ContextVar[bytes | None] = contextvars.ContextVar("aes_cu_secret", default=None)
EXAMPLE_SECRET = b"published example secret: never use it for tasks you train on"


def installation_secret() -> bytes:
    """A random secret kept in the cache directory: the state keys derive from it, so the same seed
    gives the same task on this machine while nobody can recompute a key from the generator's code."""
    from autoenvscaling.api import cache_dir

    override = _SECRET_OVERRIDE.get()
    if override is not None:
        return override
    path = Path(os.environ.get("AES_CU_SECRET_FILE") or cache_dir() / "computer_use" / "state-key-secret")
    try:
        return bytes.fromhex(path.read_text().strip())
    except (OSError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(secrets.token_hex(32))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        return bytes.fromhex(path.read_text().strip())


def render(family: str, draft: Draft, *, seed: int, level: int) -> Task:
    from .apps import app_module, webapp

    label = label_of(level)
    name = qualified_name(f"cu-{family}-{draft.kind}-l{level}-s{seed}".replace("_", "-"))
    seed_sql = webapp.seed_sql(app_module(draft.app).SCHEMA, draft.rows)
    key = hmac.new(installation_secret(), name.encode(), hashlib.sha256).hexdigest()  # the state key
    spec = {"family": family, "app": draft.app, "expect": draft.expect, "free_tables": draft.free_tables,
            "seed_digest": webapp.seed_digest(seed_sql)}
    files: dict[str, bytes | str | TaskFile] = {
        "environment/Dockerfile": dockerfile(draft.app),
        **image_files(),
        "environment/seed.sql": seed_sql,
        "environment/state.key": key + "\n",
        "tests/test.sh": package_text("verifier", "test.sh"),
        "tests/verify.py": package_text("verifier", "verify.py"),
        **{f"tests/{n}": text for n, text in verifier_library().items()},  # verify.py's library
        "tests/spec.json": json.dumps(spec, indent=1, sort_keys=True) + "\n",
        "tests/seed.sql": seed_sql,
        "tests/state.key": key + "\n",
        "solution/solve.sh": "#!/bin/bash\n# Reference solution: a Playwright script through the app's UI.\n"
                             "set -eu\ncd /solution\nHOME=/tmp python3 /solution/solve.py\n",
        "solution/solve.py": package_text("solutions", f"{family}.py"),
        "solution/uilib.py": package_text("solutions", "uilib.py"),
        "solution/params.json": json.dumps(draft.params, indent=1, sort_keys=True) + "\n",
    }
    app_lib = resources.files(__package__).joinpath("solutions", f"lib_{draft.app}.py")
    if app_lib.is_file():  # what the app's solutions share (solutions/lib_<app>.py)
        files[f"solution/lib_{draft.app}.py"] = app_lib.read_text(encoding="utf-8")
    tags = sorted({family.replace("_", "-"), draft.app, draft.kind.replace("_", "-"), *draft.tags})
    return render_task(
        domain=DOMAIN, family=family, seed=seed, difficulty=label, name=name, instruction=draft.instruction,
        description=f"{family.replace('_', ' ')} in the {draft.app} app ({label})", files=files, tags=tags,
        category="computer-use",
        verifier={"timeout_sec": 120.0, "environment_mode": "shared", "outputs": list(VERIFIER_OUTPUTS)},
        agent={"timeout_sec": draft.agent_timeout_sec, "tools": ["browser"]},
        environment={"build_timeout_sec": 1800.0, "cpus": 1, "memory_mb": 2048, "storage_mb": 2048, "browser": True,
                     "healthcheck": dict(HEALTHCHECK)},
        parameters={"kind": draft.kind, "level": level, "app": draft.app, **draft.parameters})
