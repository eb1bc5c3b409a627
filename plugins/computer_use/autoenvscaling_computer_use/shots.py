"""Screenshots of an oracle run: the reference solution saves PNGs (``uilib.shot``) when AES_SHOTS
names a folder; this runs it in a sandbox with that set, fetches them, then lets the verifier score."""

from __future__ import annotations

import time
from pathlib import Path

from autoenvscaling.api import (
    SOLUTION_DIR, Action, Agent, AgentLimits, Sandbox, StepConfig, Task, Trajectory, short_name,
    solution_files,
)

SHOTS = "/tmp/aes-oracle-shots"
NAMES = ("start", "end")


class ShootingOracle(Agent):
    name = "oracle-screenshots"

    def __init__(self) -> None:
        self.images: dict[str, bytes] = {}

    async def run(self, task: Task, sandbox: Sandbox, *, step: StepConfig | None = None,
                  limits: AgentLimits | None = None) -> Trajectory:
        start = time.monotonic()
        await sandbox.upload_files(solution_files(task, step), SOLUTION_DIR)
        command = f"AES_SHOTS={SHOTS} bash {SOLUTION_DIR}/solve.sh"
        result = await sandbox.exec(command, timeout=task.config.agent.timeout_sec)
        for name in NAMES:
            data = await sandbox.read_file(f"{SHOTS}/{name}.png")
            if data:
                self.images[name] = data
        await sandbox.exec(f"rm -rf {SOLUTION_DIR} {SHOTS}", timeout=30)
        action = Action(command=command, output=result.tail(2000), exit_code=result.exit_code, seconds=result.seconds,
                        timed_out=result.timed_out)
        return Trajectory(agent=self.name, actions=[action], seconds=time.monotonic() - start, stop_reason="done")


async def oracle_screenshots(task: Task, out: Path, *, backend: str = "bwrap") -> tuple[list[Path], float]:
    from autoenvscaling.api import TrialRunner, create_host, make_backend

    host = create_host()
    sandboxes = make_backend(backend, host)
    agent = ShootingOracle()
    try:
        result = await TrialRunner(sandboxes, host=host).run(task, agent)
    finally:
        await sandboxes.aclose()
    out.mkdir(parents=True, exist_ok=True)
    saved = []
    for name, data in agent.images.items():
        path = out / f"{short_name(task.name)}-{name}.png"
        path.write_bytes(data)
        saved.append(path)
    return saved, result.reward
