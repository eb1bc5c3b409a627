"""What ``autoenvscaling doctor`` checks for this plugin."""

from __future__ import annotations

import importlib.util

from autoenvscaling.api import PrerequisiteStatus, ProgramOnPath


class Chromium(ProgramOnPath):
    needed_for = "computer-use screenshots and host-side browser tests (tasks bring their own Chromium)"
    program = "chromium"
    install_hint = "apt-get install chromium"

    def check(self) -> PrerequisiteStatus:
        status = super().check()
        if not status.ok:
            return status
        if importlib.util.find_spec("playwright") is None:
            return PrerequisiteStatus(ok=False, detail=f"{status.detail}; the playwright package is missing",
                                      hint="pip install 'autoenvscaling-computer-use[browser]'")
        return PrerequisiteStatus(ok=True, detail=f"{status.detail} with Playwright")
