"""The generator families of the terminal domain.

``CATALOG`` holds what the domain tells the world about each family (description, skills, the family
a "different" variation moves to) without importing any generator; ``load(name)`` imports the
generator module on first use. Each module exposes ``KINDS``: its task types (``base.Kind``, a
name and a ``build(rng, level) -> Draft``).
"""

from __future__ import annotations

from types import ModuleType

from autoenvscaling.api import FamilyInfo, family_module

CATALOG: dict[str, FamilyInfo] = {info.name: info for info in [
    FamilyInfo("basics", "one-command file operations (create, copy, move, link, permissions, append, delete, count), one step per level",
               ("mkdir", "cp/mv/ln", "chmod", "echo >>", "wc/head"), "file_search"),
    FamilyInfo("file_search", "find files by name, content and size in a noisy tree; copy, clean up, deduplicate",
               ("find", "grep", "cp", "file hashing"), "archive"),
    FamilyInfo("log_analysis", "summarise web and application logs, including rotated and compressed ones",
               ("grep", "awk", "sort | uniq -c", "zcat", "JSON output"), "text_regex"),
    FamilyInfo("csv_json", "aggregate, filter, join and convert CSV and JSON data",
               ("csv parsing", "jq", "python", "aggregation"), "sqlite"),
    FamilyInfo("text_regex", "extract, redact and reformat text with regular expressions",
               ("grep -E", "sed", "awk", "regular expressions"), "log_analysis"),
    FamilyInfo("shell_script", "write a reusable bash script with arguments, flags and exit codes",
               ("bash", "argument parsing", "exit codes", "file handling"), "python_script"),
    FamilyInfo("python_script", "write a Python command-line tool or module tested on unseen inputs",
               ("python", "argparse", "JSON", "error handling"), "shell_script"),
    FamilyInfo("archive", "extract, verify and repack tar, gzip, xz and zip archives",
               ("tar", "gzip", "zip/unzip", "sha256sum"), "file_search"),
    FamilyInfo("sqlite", "query and modify a SQLite database from the command line",
               ("sqlite3", "SQL joins", "aggregation", "views and indexes"), "csv_json"),
    FamilyInfo("git_ops", "investigate and repair a git repository's history",
               ("git log -S", "git revert/restore", "branches and tags", "cherry-pick"), "config_env"),
    FamilyInfo("config_env", "edit INI configuration and merge or validate environment files",
               ("INI files", ".env files", "precedence rules", "in-place edits"), "cron_schedule"),
    FamilyInfo("cron_schedule", "write crontabs from plain-language schedules and reason about when jobs run",
               ("cron syntax", "schedules", "date arithmetic"), "process_mgmt"),
    FamilyInfo("process_mgmt", "control a background service with pid files and signals; run jobs with timeouts",
               ("background processes", "pid files", "signals", "timeout"), "git_ops"),
]}


def load(name: str) -> ModuleType:
    """The generator module of family ``name`` (imported on first use)."""
    return family_module(__name__, CATALOG, name)
