"""The ``browser`` tool: the agent drives the attempt's Chromium through the browser service the
task's image runs (image/browser.py), the same one ``aes-browser`` drives at a terminal.

Each call runs ``aes-browser --json '{...}'`` in the attempt's sandbox and returns the page as the
model sees it: the URL, the title and the page text with every control numbered
(``[7] textbox "Email" value=""``). ``screenshot: true`` also saves a PNG of the page in the sandbox
(/tmp/aes-shots/step-<n>.png) and names it in the observation.
"""

from __future__ import annotations

import json
import shlex
import time

from autoenvscaling.api import Arguments, Tool, ToolContext, ToolOutcome, truncate_middle

ACTIONS = ["goto", "click", "fill", "select", "press", "scroll", "back", "observe"]
SHOTS = "/tmp/aes-shots"


class BrowserTool(Tool):
    """Drive the attempt's web browser."""

    name = "browser"
    description = ("Use the web browser. action goto opens target (a URL such as http://127.0.0.1:8080/); click, "
                   "fill (with text), select (an option's text) and press (a key in text, e.g. Enter) act on the "
                   "element whose [number] target gives, from the last observation; scroll (target up or down), "
                   "back and observe need nothing. Every call returns the page with its controls numbered.")
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "target": {"type": "string", "maxLength": 2048,
                       "description": "goto: the URL; click/fill/select/press: the element number; scroll: up or down"},
            "text": {"type": "string", "maxLength": 4000,
                     "description": "fill: the text to type; select: the option; press: the key"},
            "screenshot": {"type": "boolean", "description": "also save a screenshot of the page"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    def __init__(self) -> None:
        self.calls = 0

    async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        start = time.monotonic()
        self.calls += 1
        payload = {"action": arguments["action"], "target": str(arguments.get("target", "")),
                   "text": str(arguments.get("text", ""))}
        if arguments.get("screenshot"):
            payload["screenshot"] = f"{SHOTS}/step-{self.calls}.png"
        command = f"mkdir -p {SHOTS} && aes-browser --json {shlex.quote(json.dumps(payload))}"
        result = await context.sandbox.exec(command, timeout=min(context.timeout, 60.0))
        if result.exit_code == 127:
            text = "error: browser: this task's environment has no browser service (aes-browser is not installed)"
        elif result.timed_out:
            text = "error: browser: the browser did not answer in time"
        else:
            text = (result.stdout.strip() or result.stderr.strip() or "(no output)")
        text = truncate_middle(text, context.limits.observation_chars)
        return ToolOutcome(text=text, action=self.action(arguments, text, seconds=time.monotonic() - start,
                                                         exit_code=result.exit_code, timed_out=result.timed_out))
