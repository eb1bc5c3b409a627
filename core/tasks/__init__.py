"""Tasks: the Harbor task model and its on-disk format."""

from .config import (
    AgentConfig,
    EnvironmentConfig,
    HealthcheckConfig,
    Provenance,
    StepConfig,
    TaskConfig,
    TaskInfo,
    VerifierConfig,
)
from .harbor import is_task_dir, parse_config, read_task, render_config, write_task
from .task import PROVENANCE_KEY, Task, TaskFile

__all__ = [
    "AgentConfig", "EnvironmentConfig", "HealthcheckConfig", "Provenance", "StepConfig", "TaskConfig",
    "TaskInfo", "VerifierConfig", "is_task_dir", "parse_config", "read_task", "render_config",
    "write_task", "PROVENANCE_KEY", "Task", "TaskFile",
]
