"""The Tool API without a model: argument checking against the schema, the fenced-block form of a
call, the registry-backed Toolbox, and the lint finding for a task naming an unknown tool. The
solver driving tools over real HTTP and real sandboxes is tests/plugins/test_external_plugin.py."""

from __future__ import annotations

import asyncio

import pytest

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.agents.text_protocol import TextTurn, parse_text_reply, parse_text_turn
from autoenvscaling.agents.tools import (Arguments, BashTool, Tool, ToolArgumentError, Toolbox, ToolContext,
                                         ToolOutcome, schema_problems, task_tool_problems)
from autoenvscaling.errors import PluginError, UsageError
from autoenvscaling.plugins import create_host, hookimpl
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.testing import ToyDomain

SCHEMA = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["set", "get"]},
        "key": {"type": "string", "pattern": "^[a-z]{1,8}$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 3},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["op", "key"],
    "additionalProperties": False,
}


class Echo(Tool):
    """Says back its text: a one-text tool."""

    name = "echo"
    description = "Say the text back."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    text_argument = "text"

    async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        return ToolOutcome(text=str(arguments["text"]), action=self.action(arguments, str(arguments["text"])))


class Store(Tool):
    name = "store"
    description = "Store things."
    parameters = SCHEMA

    async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        raise AssertionError("bad arguments must never reach run()")


@pytest.mark.parametrize(("arguments", "problem"), [
    ({"op": "set"}, "missing required argument 'key'"),
    ({"op": "put", "key": "a"}, 'op must be one of ["set", "get"]'),
    ({"op": "set", "key": "../etc"}, "key must match ^[a-z]{1,8}$"),
    ({"op": "set", "key": 5}, "key must be string, not integer"),
    ({"op": "set", "key": "a", "count": 7}, "count must be <= 3"),
    ({"op": "set", "key": "a", "count": True}, "count must be integer, not boolean"),
    ({"op": "set", "key": "a", "tags": ["x", 2]}, "tags[1] must be string, not integer"),
    ({"op": "set", "key": "a", "colour": "red"}, "unexpected argument(s) 'colour' (expected: op, key, count, tags)"),
])
def test_arguments_are_checked_against_the_schema(arguments: Arguments, problem: str) -> None:
    assert problem in schema_problems(arguments, SCHEMA)


def test_matching_arguments_have_no_problems() -> None:
    assert schema_problems({"op": "get", "key": "abc", "count": 2, "tags": ["x"]}, SCHEMA) == []


def test_bad_arguments_become_an_error_the_model_reads_not_a_crash() -> None:
    context = ToolContext.model_construct(sandbox=None, limits=AgentLimits(), timeout=1.0)  # run() is never reached
    outcome = asyncio.run(Store().call(context, {"op": "set", "key": "../../etc/shadow"}))
    assert outcome.text == "error: store: key must match ^[a-z]{1,8}$"
    assert outcome.action.tool == "store" and outcome.action.exit_code == 2
    assert outcome.action.command == 'store {"key": "../../etc/shadow", "op": "set"}'


def test_a_tool_is_offered_as_a_tool_spec_and_explained_for_the_text_protocol() -> None:
    spec = Store().spec()
    assert (spec.name, spec.description, spec.parameters) == ("store", "Store things.", SCHEMA)
    usage = Store().text_usage()
    assert "```store" in usage and '{"op": "<op>", "key": "<key>", "count": "<count>", "tags": "<tags>"}' in usage
    assert "```echo\n  <text>\n  ```" in Echo().text_usage()


def test_fenced_block_bodies_become_arguments() -> None:
    assert Store().arguments_from_block('{"op": "get", "key": "a"}') == {"op": "get", "key": "a"}
    assert Echo().arguments_from_block("hello {there}") == {"text": "hello {there}"}
    assert Echo().arguments_from_block('{"text": "hi"}') == {"text": "hi"}
    with pytest.raises(ToolArgumentError, match="must hold a JSON object"):
        Store().arguments_from_block("get a")
    with pytest.raises(ToolArgumentError, match="not a JSON object"):
        Store().arguments_from_block('{"op": ')


def test_the_text_protocol_finds_offered_tool_blocks_only() -> None:
    reply = 'First:\n```store\n{"op": "get", "key": "a"}\n```\n```bash\nls\n```'
    assert parse_text_turn(reply, tools=["bash", "store"]) == TextTurn("store", '{"op": "get", "key": "a"}', False)
    # Not offered: the block is prose, the shell block runs; with bash alone, nothing changed.
    assert parse_text_turn(reply, tools=["bash"]) == TextTurn("bash", "ls", False)
    assert parse_text_reply(reply) == ("ls", False)
    # Without bash, shell blocks and "$ cmd" lines are not runnable.
    assert parse_text_turn("```bash\nls\n```\n$ pwd\nFINISH", tools=["store"]) == TextTurn(None, None, True)
    # A tool block cut by the token limit is not run; one the model closed or ended on is.
    assert parse_text_turn('```store\n{"op": "get", "ke', truncated=True, tools=["store"]).tool is None
    assert parse_text_turn('```store\n{"op": "get", "key": "a"}', tools=["store"]).tool == "store"


class _Tools:
    @hookimpl
    def autoenvscaling_register_tools(self, registrar):  # noqa: ANN001
        registrar.add("echo", Echo)
        registrar.add("store", "tests_agents_missing.module:Store")  # never imported unless asked for


def test_the_toolbox_resolves_registered_names_lazily() -> None:
    host = create_host(entrypoints=False, plugins=[_Tools()])
    box = Toolbox.from_host(host)
    assert box.names() == ["bash", "echo", "store"]
    bash, echo = box.resolve(["bash", "echo", "bash"])
    assert isinstance(bash, BashTool) and isinstance(echo, Echo)
    assert [type(t) for t in box.resolve(None)] == [BashTool]  # a task without [agent] tools gets bash
    with pytest.raises(UsageError, match=r"unknown tool\(s\) 'kv' \(registered tools: bash, echo, store\)"):
        box.resolve(["bash", "kv"])
    with pytest.raises(PluginError, match="needs a missing module"):
        box.resolve(["store"])  # the import path is followed only now
    assert Toolbox.builtin().names() == ["bash"]


def test_a_registered_tool_must_be_a_tool() -> None:
    class NotATool:
        pass

    class Bad:
        @hookimpl
        def autoenvscaling_register_tools(self, registrar):  # noqa: ANN001
            registrar.add("nope", NotATool)

    with pytest.raises(PluginError, match="not a Tool subclass"):
        create_host(entrypoints=False, plugins=[Bad()], strict=True).tools.names()


def test_unknown_tool_names_in_a_task_are_lint_problems() -> None:
    task = ToyDomain().generate("count-lines", seed=1, difficulty="easy")
    assert task_tool_problems(task, ["bash"]) == []
    config = task.config.model_copy(update={"agent": task.config.agent.model_copy(update={"tools": ["bash", "kv"]})})
    named = task.model_copy(update={"config": config})
    assert task_tool_problems(named, ["bash", "echo"]) == [
        "tools: unknown tool(s) 'kv' (registered tools: bash, echo)"]


def test_bash_runs_in_the_sandbox_with_the_context_timeout() -> None:
    ok, why = BwrapBackend.available()
    if not ok:
        pytest.skip(why)
    task = ToyDomain().generate("count-lines", seed=1, difficulty="easy")

    async def go() -> tuple[ToolOutcome, ToolOutcome, ToolOutcome]:
        backend = BwrapBackend()
        sandbox = await backend.create(task, await backend.prepare(task))
        async with sandbox:
            context = ToolContext(sandbox=sandbox, task=task, limits=AgentLimits(observation_chars=100), timeout=4.0)
            return (await BashTool().call(context, {"command": "echo hi; id -u"}),
                    await BashTool().call(context, {"command": "sleep 30"}),
                    await BashTool().call(context, {"command": " "}))

    ran, slow, empty = asyncio.run(go())
    assert ran.text == "[exit code 0]\nhi\n0" and ran.action.command == "echo hi; id -u" and ran.action.tool == "bash"
    assert slow.action.timed_out and slow.text.startswith("[timed out")
    assert empty.text == "error: bash needs a non-empty string argument 'command'"


def test_a_tool_block_label_matches_whatever_its_case() -> None:
    assert parse_text_turn('```Store\n{"op": "get", "key": "a"}\n```', tools=["Store"]).tool == "Store"
