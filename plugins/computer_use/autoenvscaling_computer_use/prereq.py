"""What ``autoenvscaling doctor`` checks for this plugin."""

from __future__ import annotations

import importlib.util
import shutil

from autoenvscaling.api import Prerequisite, PrerequisiteStatus


class Chromium(Prerequisite):
    needed_for = "computer-use screenshots and host-side browser tests (tasks bring their own Chromium)"

    def check(self) -> PrerequisiteStatus:
        path = shutil.which("chromium")
        if not path:
            return PrerequisiteStatus(ok=False, detail="chromium is not on PATH", hint="apt-get install chromium")
        if importlib.util.find_spec("playwright") is None:
            return PrerequisiteStatus(ok=False, detail=f"{path}; the playwright package is missing",
                                      hint="pip install 'autoenvscaling-computer-use[browser]'")
        return PrerequisiteStatus(ok=True, detail=f"{path} with Playwright")
