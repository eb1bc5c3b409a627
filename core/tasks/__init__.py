"""Tasks: the Harbor task model and its on-disk format."""

from .config import (AgentConfig, EnvironmentConfig, HealthcheckConfig, Provenance, StepConfig, TaskConfig, TaskInfo,
                     VerifierConfig)
from .naming import DEFAULT_ORG, is_harbor_name, qualified_name, short_name, task_org
from .harbor import is_task_dir, parse_config, read_task, render_config, write_task
from .task import PROVENANCE_KEY, Task, TaskFile

__all__ = [
    "AgentConfig", "EnvironmentConfig", "HealthcheckConfig", "Provenance", "StepConfig", "TaskConfig",
    "TaskInfo", "VerifierConfig", "is_task_dir", "parse_config", "read_task", "render_config",
    "write_task", "PROVENANCE_KEY", "Task", "TaskFile", "DEFAULT_ORG", "is_harbor_name", "qualified_name",
    "short_name", "task_org",
]
