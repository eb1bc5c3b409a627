"""Error types for expected failures.

Every expected failure carries a one-line message and an optional hint. The CLI prints both and exits
non-zero; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class AESError(Exception):
    """Base class of all expected failures."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message.strip().splitlines()[0] if message.strip() else type(self).__name__
        self.hint = hint


class UsageError(AESError):
    """The user asked for something malformed."""


class NoFurtherVariant(UsageError):
    """A task is already a domain's simplest (or hardest) variant: it cannot be varied that way.
    The procedural proposer then asks for a "different" variant instead."""


class ConfigError(AESError):
    """A configuration file or option is invalid."""


class TaskFormatError(AESError):
    """A task directory does not follow the Harbor format."""


class PluginError(AESError):
    """A plugin failed to load or registered something invalid."""


class MissingPrerequisite(AESError):
    """A system package, service or optional dependency is missing."""

    exit_code = 3


class SandboxError(AESError):
    """The sandbox could not be created or used."""


class BuildError(SandboxError):
    """The task's environment failed to build."""


class BuildTimeout(BuildError):
    """The build ran past its time limit (a timeout verdict, not a broken environment)."""


class UnsupportedDockerfile(BuildError):
    """The Dockerfile uses an instruction outside the subset the bwrap backend builds."""


class SuiteError(AESError):
    """A suite on disk is missing or inconsistent."""
