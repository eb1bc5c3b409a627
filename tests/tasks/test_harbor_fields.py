"""Harbor task.toml fields we parse: each loads typed, is written back as Harbor's config check
accepts it, and is either honoured (tests/sandbox/test_harbor_fields_bwrap.py) or named by a lint
warning that says it is ignored and why."""

from __future__ import annotations

import subprocess
import tomllib

import pytest

from autoenvscaling.errors import TaskFormatError
from autoenvscaling.gates.lint import lint_findings
from autoenvscaling.tasks import Task, parse_config, qualified_name, read_task, render_config, write_task


EVERYTHING = """\
schema_version = "1.1"
source = "somewhere"
multi_step_reward_strategy = "final"
artifacts = ["/app/out.txt", {source = "/var/log/app", destination = "logs", exclude = ["*.tmp"]},
             {source = "/data", service = "db"}]

[task]
name = "acme/everything"

[agent]
timeout_sec = 60.0
user = "agent"
network_mode = "public"

[verifier]
timeout_sec = 60.0
network_mode = "no-network"

[[verifier.collect]]
command = "dump > /data/state.json"
service = "db"

[environment]
network_mode = "allowlist"
allowed_hosts = ["pypi.org", "*.example.com"]
os = "linux"
skills_dir = "/skills"
memory = "2G"

[environment.healthcheck]
command = "curl -sf localhost:8000"
interval_sec = 2.0
start_period_sec = 5.0

[[environment.mcp_servers]]
name = "search"
transport = "streamable-http"
url = "http://mcp:8000/mcp"

[environment.tpu]
type = "v6e"
topology = "2x2"

[solution.env]
SEED = "7"

[[steps]]
name = "one"
min_reward = {reward = 0.5}
artifacts = ["/app/one.txt"]

[steps.agent]
user = 0
network_mode = "allowlist"
allowed_hosts = ["10.0.0.0/8"]

[steps.healthcheck]
command = "true"
"""


def _task(config: dict) -> Task:
    return Task.create(qualified_name("fields"), config, "do it", {"environment/Dockerfile": "FROM ubuntu:24.04\n"})


def _warnings(task: Task) -> list[str]:
    return [f.text for f in lint_findings(task) if f.level == "warning"]


def test_every_field_loads_typed():
    cfg = parse_config(EVERYTHING)
    env = cfg.environment
    assert env.network_mode == "allowlist" and env.allowed_hosts == ["pypi.org", "*.example.com"]
    assert env.healthcheck is not None and env.healthcheck.start_period_sec == 5.0 and env.healthcheck.retries == 3
    assert env.mcp_servers[0].name == "search" and env.tpu is not None and env.tpu.topology == "2x2"
    assert cfg.solution.env == {"SEED": "7"} and cfg.source == "somewhere"
    assert cfg.multi_step_reward_strategy == "final" and cfg.verifier.collect[0].service == "db"
    step = cfg.steps[0]
    assert step.min_reward == {"reward": 0.5} and step.agent is not None and step.agent.user == "0"
    assert cfg.phase_networks() == {"one.agent": "allowlist", "one.verifier": "no-network"}
    assert not cfg.wants_internet


@pytest.mark.parametrize("text, says", [
    ('[environment]\nnetwork_mode = "open"\n', "network_mode must be one of 'public', 'no-network', 'allowlist'"),
    ('[agent]\nnetwork_mode = "internet"\n', "network_mode must be one of 'public', 'no-network', 'allowlist'"),
    ('[environment]\nallowed_hosts = ["pypi.org"]\n', "allowed_hosts is only valid with network_mode = 'allowlist'"),
    ('[verifier]\nnetwork_mode = "public"\nallowed_hosts = ["x.org"]\n', "allowed_hosts is only valid"),
    ('artifacts = [{source = "/app/../etc"}]\n', "without '..'"),
    ('artifacts = [{source = "/a", destination = "/abs"}]\n', "relative path"),
])
def test_bad_values_are_refused_in_one_line(text, says):
    with pytest.raises(TaskFormatError) as info:
        parse_config(text)
    assert says in info.value.message and "\n" not in info.value.message


@pytest.mark.parametrize("text, internet", [
    ('[environment]\nallow_internet = true\n', True),
    ('[environment]\nnetwork_mode = "public"\n', True),
    ('[environment]\nnetwork_mode = "public"\nallow_internet = false\n', True),  # an explicit mode wins, as in Harbor
    ('[environment]\nnetwork_mode = "no-network"\nallow_internet = true\n', False),
    ('[environment]\nallow_internet = false\n', False),
    ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n', False),  # never widened
    ('[environment]\nnetwork_mode = "public"\n[verifier]\nnetwork_mode = "no-network"\n', False),
    ('[agent]\nnetwork_mode = "public"\n[verifier]\nnetwork_mode = "public"\n', True),
    ('[agent]\nnetwork_mode = "public"\n', False),  # the verifier asks nothing: one network for the trial
    ('', False),
])
def test_what_the_task_asks_of_the_network(text, internet):
    assert parse_config(text).wants_internet is internet


def test_ignored_fields_are_named_by_a_lint_warning():
    task = _task({"environment": {"mcp_servers": [{"name": "search", "url": "http://mcp/sse"}],
                                  "tpu": {"type": "v6e", "topology": "2x2"}, "skills_dir": "/skills", "os": "windows",
                                  "env": {"TOKEN": "${TOKEN}"}},
                  "verifier": {"environment": {"cpus": 2}, "collect": [{"command": "true"}]},
                  "agent": {"user": "agent"}, "artifacts": [{"source": "/data", "service": "db"}]})
    warnings = _warnings(task)
    for field in ("environment.mcp_servers (search) is ignored", "environment.tpu is ignored",
                  "environment.skills_dir is ignored", "environment.os = 'windows' is ignored",
                  "environment.env: ${VAR} templates are ignored", "verifier.environment is ignored",
                  "verifier.collect is ignored", "agent.user is ignored", "/data from service 'db' is ignored"):
        assert any(w.startswith(field) or field in w for w in warnings), (field, warnings)


def test_network_narrowing_is_warned():
    allowlist = _task({"environment": {"network_mode": "allowlist", "allowed_hosts": ["pypi.org"]}})
    assert any("network_mode = 'allowlist' (agent, verifier): allowed_hosts is not enforced" in w and "offline" in w
               for w in _warnings(allowlist))
    split = _task({"environment": {"network_mode": "public"}, "verifier": {"network_mode": "no-network"}})
    assert any("network_mode differs between phases (agent: public, verifier: no-network)" in w
               for w in _warnings(split))
    steps = _task({"steps": [{"name": "a", "agent": {"network_mode": "public"}}], "environment": {}})
    assert any("a.agent: public, a.verifier: unset" in w for w in _warnings(steps))


def test_honoured_fields_raise_no_warning():
    task = _task({"environment": {"network_mode": "public", "healthcheck": {"command": "true"}},
                  "solution": {"env": {"A": "1"}}, "artifacts": ["/app/out.txt", {"source": "/app/log"}],
                  "steps": [{"name": "s", "min_reward": {"reward": 1.0}, "artifacts": ["/x"]}],
                  "multi_step_reward_strategy": "mean"})
    fields = ("network_mode", "healthcheck", "solution", "artifacts", "min_reward", "multi_step", "ignored")
    assert not [w for w in _warnings(task) if any(f in w for f in fields)], _warnings(task)
    # the positive control: the same task asking for "final" is warned about
    final = _task({"steps": [{"name": "s"}], "multi_step_reward_strategy": "final"})
    assert any("multi_step_reward_strategy = 'final' is ignored" in w for w in _warnings(final))


@pytest.mark.slow
def test_written_back_harbors_config_check_accepts_it(tmp_path):
    """Harbor's own config check (the Harbor the slow client tests install; set
    AUTOENVSCALING_HARBOR_VENV to reuse one) on the file, our rewrite and a render of the model."""
    from autoenvscaling.errors import MissingPrerequisite
    from autoenvscaling.testing import harbor_client as hc

    if hc.python312() is None and not (hc.venv_path() / "bin" / "harbor").exists():
        pytest.skip("Harbor needs Python 3.12 and this machine has none (python3.12 on PATH or under pyenv)")
    try:
        harbor_py = hc.harbor_bin(install=True).parent / "python"
    except MissingPrerequisite as exc:
        pytest.skip(exc.message)
    folder = tmp_path / "everything"
    folder.mkdir()
    (folder / "task.toml").write_text(EVERYTHING)
    task = read_task(folder)
    changed = task.with_provenance(domain="toy")  # a changed config: task.toml is rewritten from the model
    out = write_task(changed, tmp_path / "written")
    check = ("import sys; from harbor.models.task.config import TaskConfig; "
             "c = TaskConfig.model_validate_toml(open(sys.argv[1]).read()); "
             "print(c.environment.network_mode.value, c.environment.healthcheck.start_period_sec, "
             "c.solution.env, len(c.artifacts), c.steps[0].min_reward)")
    rendered = tmp_path / "rendered.toml"  # written from the model alone, not from the text read
    rendered.write_text(render_config(_task(tomllib.loads(EVERYTHING))))
    assert "mcp_servers" in rendered.read_text() and "healthcheck" in rendered.read_text()
    for path in (folder / "task.toml", out / "task.toml", rendered):
        proc = subprocess.run([str(harbor_py), "-c", check, str(path)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.split() [:3] == ["allowlist", "5.0", "{'SEED':"], proc.stdout
    assert read_task(out).config.environment.healthcheck == task.config.environment.healthcheck


def test_harbors_deprecated_sizes_are_read_as_megabytes():
    cfg = parse_config('[task]\nname = "a/b"\nversion = "1.2"\n[environment]\nmemory = "4G"\nstorage = "512M"\n')
    assert (cfg.environment.memory_mb, cfg.environment.storage_mb, cfg.task.version) == (4096, 512, "1.2")
    assert parse_config('[environment]\nmemory = "4G"\nmemory_mb = 1024\n').environment.memory_mb == 1024
    with pytest.raises(TaskFormatError, match="environment.memory 'lots' is not a size"):
        parse_config('[environment]\nmemory = "lots"\n')
