"""Red teaming: cheats (scripted agents that try to earn reward without doing the task), the library
of them that plugins extend, and the runs that score every cheat against a folder of tasks."""

from .cheat import (Cheat, agent_view_control, declared_outputs, exists_only_control, mentioned_paths,
                    naive_control)

__all__ = ["Cheat", "agent_view_control", "declared_outputs", "exists_only_control", "mentioned_paths", "naive_control"]
