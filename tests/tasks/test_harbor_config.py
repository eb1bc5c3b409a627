"""task.toml as Harbor's config check accepts it: org/name names, our settings under
[metadata.autoenvscaling], a separate verifier's artifacts as the outputs; older forms still read."""

from __future__ import annotations

import tomllib

import pytest

from autoenvscaling.errors import ConfigError, TaskFormatError
from autoenvscaling.gates.lint import lint_findings
from autoenvscaling.tasks import Task, is_harbor_name, parse_config, qualified_name, read_task, render_config, write_task

HARBOR_VERIFIER_KEYS = {"timeout_sec", "env", "user", "environment_mode", "environment", "collect", "network_mode", "allowed_hosts"}
HARBOR_AGENT_KEYS = {"timeout_sec", "user", "network_mode", "allowed_hosts"}


def _ours() -> Task:
    config = {"schema_version": "1.1", "task": {"name": qualified_name("demo-1")},
              "verifier": {"timeout_sec": 60.0, "outputs": ["/app/out.txt", "/app/data"], "imports": ["helper"]},
              "agent": {"timeout_sec": 30.0, "tools": ["bash", "browser"]},
              "environment": {"gpus": 1, "gpu_optional": True, "browser": True, "workdir": "/app"}}
    return Task.create(qualified_name("demo-1"), config, "Write out.txt.", {}).with_provenance(domain="toy", seed=3)


def test_generated_config_has_only_harbors_fields_and_ours_under_metadata():
    text = render_config(_ours())
    raw = tomllib.loads(text)
    assert raw["task"]["name"] == "autoenvscaling/demo-1"
    assert set(raw["verifier"]) <= HARBOR_VERIFIER_KEYS and raw["verifier"]["environment_mode"] == "separate"
    assert set(raw["agent"]) <= HARBOR_AGENT_KEYS
    assert "gpu_optional" not in raw["environment"] and "browser" not in raw["environment"]
    assert raw["artifacts"] == ["/app/out.txt", "/app/data"]  # the outputs, for Harbor's separate verifier
    own = raw["metadata"]["autoenvscaling"]
    assert own["domain"] == "toy" and own["seed"] == 3
    assert own["verifier"] == {"imports": ["helper"]} and own["agent"] == {"tools": ["bash", "browser"]}
    assert own["environment"] == {"gpu_optional": True, "browser": True}


def test_it_reads_back_to_the_same_settings(tmp_path):
    task = _ours()
    back = read_task(write_task(task, tmp_path / "demo-1"))
    assert back == task
    cfg = back.config
    assert cfg.verifier.outputs == ["/app/out.txt", "/app/data"] and cfg.verifier.effective_view == "outputs"
    assert cfg.verifier.imports == ["helper"] and cfg.agent.tools == ["bash", "browser"]
    assert cfg.environment.gpu_optional and cfg.environment.browser
    assert back.provenance.domain == "toy" and "verifier" not in cfg.metadata["autoenvscaling"]


def test_our_older_form_still_reads_and_means_the_same():
    old = parse_config('[verifier]\noutputs = ["/app/out.txt"]\nimports = ["helper"]\n[agent]\ntools = ["browser"]\n'
                       '[environment]\nbrowser = true\ngpu_optional = true\n')
    assert old.verifier.outputs == ["/app/out.txt"] and old.verifier.environment_mode == "separate"
    assert old.agent.tools == ["browser"] and old.environment.browser and old.environment.gpu_optional
    raw = old.to_dict()
    assert raw["artifacts"] == ["/app/out.txt"] and "outputs" not in raw["verifier"] and "tools" not in raw.get("agent", {})
    # an older "agent" view keeps the agent's filesystem: it is not Harbor's separate verifier
    agent_view = parse_config('[verifier]\noutputs = ["/x"]\nview = "agent"\n')
    assert agent_view.verifier.environment_mode is None and agent_view.verifier.effective_view == "agent"


def test_a_harbor_separate_verifier_is_our_outputs_view():
    cfg = parse_config('artifacts = ["/app/result.json", {source = "/var/log/app", destination = "logs"},'
                       ' {source = "/data", service = "db"}]\n[verifier]\nenvironment_mode = "separate"\n')
    assert cfg.verifier.effective_view == "outputs"
    assert cfg.verifier.outputs == ["/app/result.json", "/var/log/app"]  # a sidecar's artifact is not ours
    assert cfg.to_dict()["artifacts"] == cfg.artifacts  # written back as it came
    nothing = parse_config('[verifier]\nenvironment_mode = "separate"\n')
    assert nothing.verifier.effective_view == "outputs" and nothing.verifier.outputs == []


def test_shared_mode_keeps_our_outputs_under_metadata():
    cfg = parse_config('[verifier]\nenvironment_mode = "shared"\n[metadata.autoenvscaling.verifier]\noutputs = ["/run/s.sock"]\n')
    assert cfg.verifier.outputs == ["/run/s.sock"] and cfg.verifier.effective_view == "outputs"
    raw = cfg.to_dict()
    assert "artifacts" not in raw and raw["metadata"]["autoenvscaling"]["verifier"] == {"outputs": ["/run/s.sock"]}


def test_a_setting_given_twice_with_different_values_is_refused():
    with pytest.raises(TaskFormatError, match="set both"):
        parse_config('[agent]\ntools = ["bash"]\n[metadata.autoenvscaling.agent]\ntools = ["browser"]\n')


def test_an_imported_task_is_written_back_byte_identical(tmp_path):
    text = ('# imported\nschema_version = "1.4"\nartifacts = ["/app/x"]\n\n[task]\nname = "lab/task-a"\n\n'
            '[verifier]\nenvironment_mode = "separate"\ntimeout_sec = 10.0\n')
    src = tmp_path / "src"
    src.mkdir()
    (src / "task.toml").write_text(text)
    (src / "instruction.md").write_text("do it")
    task = read_task(src)
    assert task.name == "lab/task-a"
    assert (write_task(task, tmp_path / "out") / "task.toml").read_text() == text


def test_names_in_harbors_form(monkeypatch):
    assert qualified_name("terminal-basics-l0-s1") == "autoenvscaling/terminal-basics-l0-s1"
    assert qualified_name("lab/kept") == "lab/kept"
    assert qualified_name("bad name!") == "autoenvscaling/bad-name"
    assert is_harbor_name("a/b") and not is_harbor_name("ab") and not is_harbor_name("a/b/c") and not is_harbor_name("-a/b")
    monkeypatch.setenv("AUTOENVSCALING_TASK_ORG", "my-lab")
    assert qualified_name("x") == "my-lab/x"
    monkeypatch.setenv("AUTOENVSCALING_TASK_ORG", "no/slashes")
    with pytest.raises(ConfigError, match="not a valid org"):
        qualified_name("x")


def test_every_domain_names_its_tasks_in_harbors_form():
    from autoenvscaling.plugins import create_host

    host = create_host()
    for name in host.domains.names():
        domain = host.domains.get(name)()
        task = domain.generate(domain.families()[0].name, seed=1, difficulty="easy")
        assert is_harbor_name(task.name) and task.config.task.name == task.name, name


def test_the_lint_gate_refuses_a_generated_task_harbor_would_refuse():
    bad = Task.create("demo", {"task": {"name": "demo"}}, "x", {}).with_provenance(domain="toy")
    found = [f for f in lint_findings(bad) if "org/name" in f.text]
    assert [f.level for f in found] == ["problem"] and "autoenvscaling/demo" in found[0].text
    imported = Task.create("demo", {"task": {"name": "demo"}}, "x", {})
    assert [f.level for f in lint_findings(imported) if "org/name" in f.text] == ["warning"]
    good = Task.create("a/demo", {"task": {"name": "a/demo"}}, "x", {}).with_provenance(domain="toy")
    assert not [f for f in lint_findings(good) if "org/name" in f.text]


def test_the_harbor_harness_explains_only_a_declared_shared_verifier(tmp_path):
    from autoenvscaling.testing import harbor_client as hc

    shared, separate = tmp_path / "shared", tmp_path / "separate"
    for folder, mode in ((shared, "shared"), (separate, "separate")):
        (folder / "environment").mkdir(parents=True)
        (folder / "task.toml").write_text(f'[verifier]\nenvironment_mode = "{mode}"\n')
        (folder / "environment" / "Dockerfile").write_text("FROM debian:bookworm AS build\nFROM build\nFROM python:3.11-slim\n")
    findings = [{"rule": "shared-verifier", "path": str(shared / "task.toml")},
                {"rule": "shared-verifier", "path": str(separate / "task.toml")},
                {"rule": "unknown-config-field", "path": str(shared / "task.toml")}]
    assert hc.unexplained(findings) == findings[1:]
    assert hc.base_images([shared, separate]) == ["debian:bookworm", "python:3.11-slim"]
