"""AutoEnvScaling's computer-use domain: tasks done in a web browser on local web apps.

This module is what the ``autoenvscaling`` entry point loads, so it stays cheap: everything is
registered by import path (``declare``), and neither Playwright nor any generator is imported here.
"""

from __future__ import annotations

from autoenvscaling.api import declare

__version__ = "0.1.0"

# The domain's cheats (cheats.py), registered by path: nothing is imported until one is used.
CHEATS = {"mirror-sql": "MirrorSql", "mirror-swap": "MirrorSwap", "restart-app": "RestartApp",
          "patch-app-client": "PatchAppClient", "api-order": "ApiOrder", "api-order-review": "ApiOrderThenReview",
          "forged-review-token": "ForgedReviewToken", "shotgun-edit": "ShotgunEdit",
          "wishlist-everything": "WishlistEverything", "success-url": "SuccessUrl", "lookalike-page": "LookalikePage"}

declare(
    globals(),
    domains={"computer_use": ("autoenvscaling_computer_use.domain:ComputerUseDomain",
                              "web apps in a real browser (Playwright + Debian's Chromium), verified on the app's state")},
    tools={"browser": ("autoenvscaling_computer_use.tool:BrowserTool",
                       "drive the attempt's Chromium: goto, click, fill, select, press, scroll, back, observe")},
    gates={"computer-use-lint": ("autoenvscaling_computer_use.gate:ComputerUseLintGate",
                                 "computer-use tasks: spec, seed, key and solution present and consistent; nothing hidden in the image"),
           "computer-use-state": ("autoenvscaling_computer_use.gate:ComputerUseStateGate",
                                  "computer-use tasks: every attempt starts from the seeded state; reset restores it")},
    formats={"web-collection": ("autoenvscaling_computer_use.external:WebCollectionFormat",
                                "external web-task collections: collection.toml, app/, tasks.jsonl, verify(url) functions")},
    prerequisites={"chromium": "autoenvscaling_computer_use.prereq:Chromium"},
    cheats={f"computer_use.{name}": f"autoenvscaling_computer_use.cheats:{cls}" for name, cls in CHEATS.items()},
    commands=["autoenvscaling_computer_use.cli:computer_use"],
)
