"""Suites: Harbor task directories + dataset.toml + an index, and the formats tasks travel in.

``SuiteStore`` is the on-disk suite (store.py); ``TaskFormat`` subclasses convert between tasks and
other layouts (harbor_format.py, rows.py; plugins add more through the formats hook).
"""

from .formats import TaskFormat
from .records import AddResult, SuiteStats, TaskFilter, TaskRecord
from .store import SuiteStore

__all__ = ["AddResult", "SuiteStats", "SuiteStore", "TaskFilter", "TaskFormat", "TaskRecord"]
