"""A flywheel run over the toy domain whose solver is the scripted server at BASE_URL: the process
the SIGKILL test kills and resumes. Usage: python flywheel_child.py OUT BASE_URL"""

from __future__ import annotations

import asyncio
import sys

from autoenvscaling.agents.base import AgentLimits
from autoenvscaling.executors.jobs import LLMSpec, SolverSpec
from autoenvscaling.flywheel.loop import Flywheel, FlywheelConfig
from autoenvscaling.plugins import create_host
from autoenvscaling.sandbox.bwrap import BwrapBackend
from autoenvscaling.testing import toy

# seed 2: round 1 already has a task that leaves the pool, which the SIGKILL test needs to see
CONFIG = FlywheelConfig(seed=2, rounds=3, per_round=3, batch=2)


async def main(out: str, base_url: str) -> None:
    solver = SolverSpec(llm=LLMSpec(model="scripted-solver", base_url=base_url),
                        limits=AgentLimits(max_turns=3, timeout_sec=60))
    fw = Flywheel(CONFIG, out, host=create_host(entrypoints=False, plugins=[toy]), backend=BwrapBackend(),
                  solver=solver, resume=True)
    try:
        await fw.run()
    finally:
        fw.close()
        await fw.executor.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
