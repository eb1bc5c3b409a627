"""The browser service in a real sandbox: the command-line client, the browser tool, what the
browser may reach, and the solver agent completing a task through real Chromium, driven by the
scripted OpenAI server over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import re

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.agents.tools import ToolContext

from cu_helpers import bwrap, live_sandbox, params_of, task_of, trial, verifier_output

pytestmark = bwrap


def _tool_context(sandbox, task) -> ToolContext:
    return ToolContext(sandbox=sandbox, task=task, limits=AgentLimits(), timeout=60.0)


def test_the_command_line_client_drives_the_same_browser_across_commands():
    task = task_of("crm_search_edit", seed=3)
    target = params_of(task)["edits"][0]

    async def go():
        async with live_sandbox(task) as sb:
            first = await sb.exec("aes-browser goto http://127.0.0.1:8080/contacts", timeout=60)
            # a new command, a new process: the page is still open in the service's browser
            again = await sb.exec("aes-browser observe", timeout=60)
            box = re.search(r'\[(\d+)\] textbox "Search contacts"', again.stdout).group(1)
            await sb.exec(f"aes-browser fill {box} '{target['name']}'", timeout=60)
            button = re.search(r'\[(\d+)\] button "Search"', again.stdout).group(1)
            found = await sb.exec(f"aes-browser click {button} --screenshot /tmp/found.png", timeout=60)
            shot = await sb.read_file("/tmp/found.png")
            bad = await sb.exec("aes-browser click 9999", timeout=60)
            usage = await sb.exec("aes-browser", timeout=60)
            return first, again, found, shot, bad, usage

    first, again, found, shot, bad, usage = asyncio.run(go())
    assert first.exit_code == 0 and "URL: http://127.0.0.1:8080/contacts" in first.stdout
    assert "Title: Contacts - Acme CRM" in again.stdout and '[1] link "Contacts"' in again.stdout
    assert found.exit_code == 0 and target["name"] in found.stdout and "matching" in found.stdout
    assert "screenshot saved to /tmp/found.png" in found.stdout and shot[:8] == b"\x89PNG\r\n\x1a\n"
    assert bad.exit_code == 1 and "there is no element [9999] on this page" in bad.stdout
    assert usage.exit_code == 2 and "usage: aes-browser" in usage.stderr


def test_the_browser_tool_observes_and_acts_and_reaches_only_local_web_apps():
    from autoenvscaling_computer_use.tool import BrowserTool

    task = task_of("crm_search_edit", seed=4)
    tool = BrowserTool()

    async def go():
        async with live_sandbox(task) as sb:
            ctx = _tool_context(sb, task)
            out = {}
            out["blank"] = await tool.call(ctx, {"action": "observe"})
            out["goto"] = await tool.call(ctx, {"action": "goto", "target": "127.0.0.1:8080/contacts/new"})
            out["fill"] = await tool.call(ctx, {"action": "fill", "target": "3", "text": "Probe Person"})
            out["select"] = await tool.call(ctx, {"action": "select", "target": "8", "text": "Customer"})
            out["file"] = await tool.call(ctx, {"action": "goto", "target": "file:///etc/passwd"})
            out["remote"] = await tool.call(ctx, {"action": "goto", "target": "http://example.com/"})
            out["chrome"] = await tool.call(ctx, {"action": "goto", "target": "chrome://version"})
            out["bad"] = await tool.call(ctx, {"action": "teleport"})
            out["shot"] = await tool.call(ctx, {"action": "observe", "screenshot": True})
            out["png"] = await sb.read_file("/tmp/aes-shots/step-8.png")
            return out

    out = asyncio.run(go())
    assert "no page open yet" in out["blank"].text
    assert "URL: http://127.0.0.1:8080/contacts/new" in out["goto"].text
    assert '[3] textbox "Name" value="" required' in out["goto"].text
    assert '[3] textbox "Name" value="Probe Person"' in out["fill"].text
    assert 'combobox "Status" selected="Customer"' in out["select"].text
    for key in ("file", "remote", "chrome"):
        assert out[key].text.startswith("error: the browser may open only this machine's web apps"), out[key].text
        assert out[key].action.exit_code == 1
    assert out["bad"].text.startswith("error: browser: action must be one of") and out["bad"].action.exit_code == 2
    assert "[screenshot saved to /tmp/aes-shots/step-8.png]" in out["shot"].text and out["png"][:4] == b"\x89PNG"
    assert out["goto"].action.tool == "browser" and out["goto"].action.command.startswith("browser {")


def _ids(text: str) -> dict[str, str]:
    """Element numbers by their label in an observation."""
    return {m.group(2): m.group(1) for m in re.finditer(r'\[(\d+)\] \w+ "([^"]*)"', text)}


def test_the_solver_with_the_browser_tool_completes_a_task_through_real_chromium():
    """The solver is built as the flywheel's workers build it (``SolverSpec.build``: every registered
    tool); the scripted model reads each observation (the tool message) to find the element numbers,
    as a real model would; the edit is done through the CRM's pages only, and the verifier scores 1."""
    from autoenvscaling.executors.jobs import LLMSpec, SolverSpec
    from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, ToolCallsReply
    from autoenvscaling.plugins import create_host

    task = task_of("crm_search_edit", seed=5, difficulty="easy")
    edit = params_of(task)["edits"][0]
    [(fieldname, value)] = edit["set"].items()
    label = {"phone": "Phone", "status": "Status", "city": "City", "email": "Email"}[fieldname]
    plan = [
        lambda ids: ("goto", "http://127.0.0.1:8080/contacts", ""),
        lambda ids: ("fill", ids["Search contacts"], edit["name"]),
        lambda ids: ("click", ids["Search"], ""),
        lambda ids: ("click", ids[edit["name"]], ""),
        lambda ids: ("click", ids["Edit contact"], ""),
        lambda ids: ("select" if fieldname == "status" else "fill", ids[label], value),
        lambda ids: ("click", ids["Save changes"], ""),
    ]
    seen: list[str] = []

    def reply(body: dict):
        last = body["messages"][-1]
        if last["role"] == "tool":
            seen.append(last["content"])
        step = len(seen)
        if step >= len(plan):
            return ToolCallsReply([("finish", {})])
        ids = _ids(seen[-1]) if seen else {}
        action, target, text = plan[step](ids)
        return ToolCallsReply([("browser", {"action": action, "target": target, "text": text})])

    with ScriptedOpenAIServer(reply) as srv:
        spec = SolverSpec(llm=LLMSpec(model="solver-model", base_url=srv.base_url, backend="openai"),
                          limits=AgentLimits(timeout_sec=300))
        host = create_host()
        result = trial(task, spec.build(host), host=host)
        bodies = srv.chat_bodies
    assert result.status == "ok", result.error
    assert result.reward == 1.0, verifier_output(result)
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert offered == ["browser", "finish"]
    actions = result.trajectory.actions
    assert [a.tool for a in actions] == ["browser"] * len(plan)
    assert "Changes saved." in actions[-1].output and json.loads(actions[-1].command.split(" ", 1)[1])["action"] == "click"


def test_playwright_drivers_read_their_compiled_code_from_the_images_cache():
    """The image fills node's compile cache at build: a driver an attempt starts takes the compiled
    code of Playwright's bundles from it (V8 accepts it) instead of compiling them again. The control
    starts the same driver without the cache's variable and reads nothing."""
    start = ("env NODE_DEBUG_NATIVE=COMPILE_CACHE python3 -c "
             "'from playwright.sync_api import sync_playwright; sync_playwright().start().stop()'")

    async def go():
        async with live_sandbox(task_of("crm_search_edit", seed=3)) as sb:
            return await sb.exec(start, timeout=120), await sb.exec("env -u NODE_COMPILE_CACHE " + start, timeout=120)

    cached, control = asyncio.run(go())
    assert cached.exit_code == 0 and control.exit_code == 0, cached.stderr[-500:] + control.stderr[-500:]
    bundle = re.search(r"V8 code cache for CommonJS \S+/coreBundle\.js was (\w+)", cached.stderr)
    assert bundle and bundle.group(1) == "accepted", cached.stderr[-1500:]
    assert "/opt/aes/node-cache/" in cached.stderr
    assert "compile cache" not in control.stderr
