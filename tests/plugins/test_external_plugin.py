"""A plugin outside the core (tests/fixtures/plugins/aes_testplugin, an installed-style distribution
found through PYTHONPATH) adds a tool and a sandbox backend, and both work wherever built-in ones do:
the solver uses the plugin's ``kv`` tool through native tool calls and through the fenced-block
protocol (real HTTP to the scripted OpenAI server, real bubblewrap, a verifier that checks the
tool's effect), a task that does not name the tool never sees it, and the CLI accepts the plugin's
``bwrap-offline`` backend for ``tasks validate`` and ``run``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import pytest

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.agents.solver import SolverAgent
from autoenvscaling.agents.tools import Toolbox
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, TextReply, ToolCallsReply
from autoenvscaling.plugins import create_host
from autoenvscaling.plugins.host import PluginHost
from autoenvscaling.runtime.trial import TrialResult, TrialRunner
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.tasks import Task, read_task
from autoenvscaling.testing import ToyDomain

PLUGIN_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "aes_testplugin"
KV_TASK = PLUGIN_DIR / "tasks" / "kv-note"
SET_COLOUR = {"op": "set", "key": "colour", "value": "blue-42"}


@pytest.fixture(scope="module")
def plugin() -> Iterator[ModuleType]:
    """The plugin's module, imported from its folder as PYTHONPATH would (no pip install)."""
    sys.path.insert(0, str(PLUGIN_DIR))
    try:
        import aes_testplugin

        yield aes_testplugin
    finally:
        sys.path.remove(str(PLUGIN_DIR))


@pytest.fixture(scope="module")
def host(plugin: ModuleType) -> PluginHost:
    return create_host(entrypoints=False, plugins=[plugin], strict=True)


@pytest.fixture(scope="module")
def bwrap() -> BwrapBackend:
    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    return BwrapBackend()


def _attempt(backend: Any, task: Task, script: list[Any], *, tools: Toolbox | None,
             **solver_kw: Any) -> tuple[TrialResult, list[dict[str, Any]]]:
    with ScriptedOpenAIServer(script) as srv:
        llm = OpenAIBackend(srv.base_url, None, "scripted", max_retries=0)
        solver = SolverAgent(llm, tools=tools, limits=AgentLimits(max_turns=4, timeout_sec=60), **solver_kw)

        async def go() -> TrialResult:
            try:
                return await TrialRunner(backend).run(task, solver)
            finally:
                await llm.aclose()

        return asyncio.run(go()), srv.chat_bodies


def _pythonpath() -> str:
    """The plugin's folder first on PYTHONPATH (what a user would set), anything already there after."""
    return os.pathsep.join(p for p in (str(PLUGIN_DIR), os.environ.get("PYTHONPATH")) if p)


def _offered(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def test_the_entry_point_is_found_through_pythonpath_alone() -> None:
    code = ("from importlib import metadata; "
            "print(json.dumps(sorted((e.name, e.value, e.dist.name) for e in metadata.entry_points(group='autoenvscaling') "
            "if e.dist.name == 'aes_testplugin')))")
    out = subprocess.run([sys.executable, "-c", "import json; " + code], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": _pythonpath()}, check=True)
    assert json.loads(out.stdout) == [["testplugin", "aes_testplugin", "aes_testplugin"]]


def test_the_plugin_registers_a_tool_and_a_backend(host: PluginHost) -> None:
    assert host.tools.names() == ["bash", "kv"] and host.tools.entry("kv").plugin == "aes_testplugin"
    assert "bwrap-offline" in host.sandbox_backends.names()
    assert read_task(KV_TASK).config.agent.tools == ["bash", "kv"]


def test_native_tool_calls_use_the_plugin_tool(host: PluginHost, bwrap: BwrapBackend) -> None:
    result, bodies = _attempt(bwrap, read_task(KV_TASK), [
        ToolCallsReply([("kv", SET_COLOUR)], content="Storing it."),
        ToolCallsReply([("kv", {"op": "get", "key": "colour"})]),
        ToolCallsReply([("finish", {})]),
    ], tools=Toolbox.from_host(host))
    t = result.trajectory
    assert result.status == "ok" and result.reward == 1.0, result
    assert _offered(bodies[0]) == ["bash", "finish", "kv"]
    kv_schema = next(x["function"]["parameters"] for x in bodies[0]["tools"] if x["function"]["name"] == "kv")
    assert kv_schema["properties"]["key"]["pattern"] == "^[a-z0-9_-]{1,32}$"
    # The calls are the trajectory's actions, named by their tool; the read-back went to the model.
    assert t is not None and [(a.tool, a.command) for a in t.actions] == [
        ("kv", 'kv {"key": "colour", "op": "set", "value": "blue-42"}'), ("kv", 'kv {"key": "colour", "op": "get"}')]
    assert t.actions[0].thought == "Storing it." and bodies[2]["messages"][-1]["content"] == "blue-42"


def test_the_text_protocol_uses_the_plugin_tool(host: PluginHost, bwrap: BwrapBackend) -> None:
    result, bodies = _attempt(bwrap, read_task(KV_TASK), [
        TextReply('I will store it.\n```kv\n{"op": "set", "key": "colour", "value": "blue-42"}\n```'),
        TextReply("FINISH"),
    ], tools=Toolbox.from_host(host), tool_calling=False)
    assert result.reward == 1.0 and "tools" not in bodies[0]
    system = bodies[0]["messages"][0]["content"]
    assert "```kv" in system and "op set" in system and "bash" in system  # the tool is explained in text
    assert bodies[1]["messages"][-1] == {"role": "user", "content": "stored colour"}
    assert result.trajectory is not None and [a.tool for a in result.trajectory.actions] == ["kv"]


def test_a_task_without_bash_is_taught_only_its_tools(host: PluginHost, bwrap: BwrapBackend) -> None:
    """[agent] tools = ["kv"]: the text protocol's prompt has no shell and no bash example, and a
    ```bash block the model writes anyway runs nothing."""
    task = read_task(KV_TASK)
    task = task.with_config(task.config.model_copy(update={"agent": task.config.agent.model_copy(update={"tools": ["kv"]})}))
    result, bodies = _attempt(bwrap, task, [
        TextReply("```bash\necho blue-42 > /var/lib/aes-kv/colour\n```"),
        TextReply('```kv\n{"op": "set", "key": "colour", "value": "blue-42"}\n```'),
        TextReply("FINISH"),
    ], tools=Toolbox.from_host(host), tool_calling=False)
    system = bodies[0]["messages"][0]["content"]
    assert "```bash" not in system and "```kv" in system and "there is no shell" in system
    assert [m["role"] for m in bodies[0]["messages"]] == ["system", "user"]  # no bash worked example
    assert result.trajectory is not None and [a.tool for a in result.trajectory.actions] == ["kv"]
    assert result.reward == 1.0


def test_a_task_without_the_tool_is_not_offered_it(host: PluginHost, bwrap: BwrapBackend) -> None:
    task = ToyDomain().generate("count-lines", seed=3, difficulty="easy")  # no [agent] tools: bash only
    result, bodies = _attempt(bwrap, task, [ToolCallsReply([("kv", SET_COLOUR)]), ToolCallsReply([("finish", {})])],
                              tools=Toolbox.from_host(host))
    assert _offered(bodies[0]) == ["bash", "finish"]
    assert bodies[1]["messages"][-1]["content"] == "error: unknown tool 'kv' (tools: bash, finish)"
    assert result.trajectory is not None and result.trajectory.actions == []
    # In text, a ```kv block is not a call either: nothing runs, the model is told what would.
    _, text_bodies = _attempt(bwrap, task, [TextReply('```kv\n{"op": "get", "key": "a"}\n```'), TextReply("FINISH")],
                              tools=Toolbox.from_host(host), tool_calling=False)
    assert "```kv" not in text_bodies[0]["messages"][0]["content"]
    assert "no ```bash block and no FINISH line" in text_bodies[1]["messages"][-1]["content"]


def test_bad_arguments_are_an_observation_and_cannot_leave_the_store(host: PluginHost, bwrap: BwrapBackend) -> None:
    # The attack: a key that walks out of /var/lib/aes-kv onto the verifier's reward file.
    escape = {"op": "set", "key": "../../../logs/verifier/reward.txt", "value": "1"}
    result, bodies = _attempt(bwrap, read_task(KV_TASK), [
        ToolCallsReply([("kv", escape)]),
        ToolCallsReply([("kv", {"op": "set", "key": "colour"})]),  # no value
        ToolCallsReply([("finish", {})]),
    ], tools=Toolbox.from_host(host))
    answers = [b["messages"][-1]["content"] for b in bodies[1:]]
    assert answers == ["error: kv: key must match ^[a-z0-9_-]{1,32}$", "error: kv: op set needs a string 'value'"]
    assert result.reward == 0.0 and result.trajectory is not None and result.trajectory.stop_reason == "finished"


def test_a_solver_without_the_plugin_says_which_tools_it_has(bwrap: BwrapBackend) -> None:
    result, bodies = _attempt(bwrap, read_task(KV_TASK), [], tools=None)
    t = result.trajectory
    assert bodies == [] and t is not None and t.stop_reason == "error"
    assert "unknown tool(s) 'kv' (registered tools: bash)" in (t.error or "")


def _cli(*args: str, timeout: float = 300, plugin: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUTOENVSCALING_STRICT_PLUGINS": "1"}
    if plugin:
        env["PYTHONPATH"] = _pythonpath()
    else:
        env["AUTOENVSCALING_LOAD_PLUGINS"] = ""  # an empty allow-list: built-ins only
    return subprocess.run([sys.executable, "-c", "from autoenvscaling.cli.main import main; main()", *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_tasks_validate_accepts_the_plugin_backend(bwrap: BwrapBackend) -> None:
    out = _cli("tasks", "validate", "--backend", "bwrap-offline", "--json", str(KV_TASK))
    assert out.returncode == 0, out.stderr[-2000:]
    [report] = json.loads(out.stdout)
    assert (report["task"], report["status"]) == (str(KV_TASK), "valid"), report["reason"]
    unknown = _cli("tasks", "validate", "--backend", "bwrap-offlne", str(KV_TASK))
    assert unknown.returncode != 0
    assert "unknown sandbox backend 'bwrap-offlne' (known: bwrap, bwrap-offline, docker)" in unknown.stderr


def test_without_the_plugin_the_task_fails_lint_naming_the_registered_tools() -> None:
    out = _cli("tasks", "validate", "--json", str(KV_TASK), plugin=False)
    assert out.returncode == 0, out.stderr[-2000:]
    [report] = json.loads(out.stdout)
    assert report["status"] == "invalid" and report["gates"][0]["name"] == "lint"
    assert "tools: unknown tool(s) 'kv' (registered tools: bash)" in report["reason"]


def test_run_accepts_the_plugin_backend(bwrap: BwrapBackend, tmp_path: Path) -> None:
    out = _cli("run", "--backend", "bwrap-offline", "--no-solver", "--rounds", "1", "--per-round", "1",
               "--out", str(tmp_path / "run"), "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    [summary] = json.loads(out.stdout)["rounds"]
    assert summary["proposals"] == 1 and summary["admitted"] == 1, summary
    unknown = _cli("run", "--backend", "nope", "--no-solver", "--out", str(tmp_path / "x"))
    assert unknown.returncode != 0 and "unknown sandbox backend 'nope'" in unknown.stderr
    wrong = _cli("run", "--llm-backend", "nope", "--no-solver", "--out", str(tmp_path / "y"))
    assert wrong.returncode != 0 and "unknown llm backend 'nope' (known: llama-server, openai, transformers)" in wrong.stderr
