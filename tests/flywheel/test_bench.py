"""``bench proposers``: every kind on the same assignments, per model, with real gates and a scripted
model server (one model that writes valid tasks, one that never follows the format)."""

from __future__ import annotations

import asyncio
from typing import Any

from autoenvscaling.flywheel.bench import bench_assignments, bench_proposers
from autoenvscaling.llm.openai_backend import OpenAIBackend
from autoenvscaling.llm.scripted_server import ScriptedOpenAIServer, TextReply, ToolCallsReply
from autoenvscaling.plugins import create_host
from autoenvscaling.proposers.response import render_task
from autoenvscaling.tasks import render_config
from autoenvscaling.testing import ToyDomain, toy

GOOD = ToyDomain().generate("count-lines", seed=12, difficulty="easy")


def _write_script(task: Any) -> str:
    parts = ["rm -rf /workspace/task && mkdir -p /workspace/task"]
    files = {"task.toml": render_config(task), "instruction.md": task.instruction}
    files |= {p: f.text for p, f in task.files.items()}
    for path, text in files.items():
        parts.append(f"mkdir -p $(dirname /workspace/task/{path}) && cat > /workspace/task/{path} <<'AES_EOF'\n{text}AES_EOF")
    return "\n".join(parts) + "\nchmod +x /workspace/task/tests/test.sh /workspace/task/solution/solve.sh"


def reply(request: dict[str, Any]) -> Any:
    """A "good" model writes a valid task in whatever protocol it is asked for; "bad" never does."""
    good = request["model"] == "good"
    if "tools" not in request:
        return TextReply(render_task(GOOD) if good else "Here is an idea for a task: count some lines.")
    if not good:
        return ToolCallsReply([("finish", {})])
    last = request["messages"][-1]
    if last["role"] != "tool":
        return ToolCallsReply([("bash", {"command": _write_script(GOOD)})])
    if "Admission checks" in last["content"]:
        return ToolCallsReply([("finish", {})])
    return ToolCallsReply([("check", {})])


def test_bench_compares_kinds_per_model(backend: Any) -> None:
    host = create_host(entrypoints=False, plugins=[toy])
    domain = ToyDomain()
    assert bench_assignments(domain, 3, seed=1) == bench_assignments(domain, 3, seed=1)  # same for every model
    seen: list[tuple[str, str, str]] = []
    with ScriptedOpenAIServer(reply) as srv:
        models = {name: OpenAIBackend(srv.base_url, None, name, max_retries=0) for name in ("good", "bad")}

        async def go() -> Any:
            try:
                return await bench_proposers(host=host, backend=backend, domain=domain, models=models, n=1, seed=1,
                                             progress=lambda *args: seen.append(args))
            finally:
                for llm in models.values():
                    await llm.aclose()

        rows = asyncio.run(go())
    table = {(r.model, r.proposer): r for r in rows}
    assert set(table) == {(m, k) for m in ("good", "bad") for k in ("prompt", "prompt-feedback", "agentic")}
    for kind in ("prompt", "prompt-feedback", "agentic"):
        good, bad = table[("good", kind)], table[("bad", kind)]
        assert (good.rate.successes, good.rate.n) == (1, 1) and good.outcomes["admitted"] == 1
        assert (bad.rate.successes, bad.rate.n) == (0, 1) and bad.outcomes["failed_validation"] == 1
        assert good.rate.low is not None and good.rate.low < 1.0  # a Wilson interval, not a point
        assert good.cost.per_valid_usd is None and good.cost.unpriced == 1  # these models have no price
    assert len(seen) == 6
