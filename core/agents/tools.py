"""Agent tools: what an agent can do in its attempt besides talking.

A ``Tool`` has a name, a description and a JSON schema of its arguments (offered to models with
native tool calling as a ``ToolSpec``), a way to be written in the fenced-block protocol for models
without it (a block labelled with the tool's name, holding a JSON object of arguments, or plain text
for a tool with one text argument), and an async ``run``. Tools act only through the
``ToolContext``: the attempt's live sandbox (or services the attempt owns), never the host.

Tools are registered by plugins (``autoenvscaling_register_tools``, the "tool" registry); a task's
``tools`` ([metadata.autoenvscaling.agent]) names the ones its agent gets. ``Toolbox`` resolves those names. ``finish`` is not
a tool: it is how the agent loop ends, so every agent always has it.
"""

from __future__ import annotations

import abc
import json
import re
from typing import TYPE_CHECKING, Callable, ClassVar, Collection, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, JsonValue

from ..errors import AESError, UsageError
from ..llm.base import ToolSpec
from ..sandbox.base import ExecResult, Sandbox
from ..tasks import StepConfig, Task
from .base import Action, AgentLimits

if TYPE_CHECKING:
    from ..plugins.host import PluginHost

Arguments = dict[str, JsonValue]
DEFAULT_TOOLS = ("bash",)
"""What an agent gets when its task's ``tools`` ([metadata.autoenvscaling.agent]) is unset."""


class ToolContext(BaseModel):
    """What a tool call may use: the attempt's sandbox, the task (None for an agent working outside a
    task, such as the agentic proposer), the step, the agent's limits, and ``timeout``: the seconds
    this call may take (the command limit, cut to what the attempt has left)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    sandbox: Sandbox
    task: Task | None = None
    step: StepConfig | None = None
    limits: AgentLimits
    timeout: float


class ToolOutcome(BaseModel):
    """One call's result: ``text`` goes back to the model, ``action`` into the trajectory."""

    model_config = ConfigDict(frozen=True)

    text: str
    action: Action


class Tool(abc.ABC):
    """An action an agent can take. Subclasses set ``name``, ``description``, ``parameters`` (a JSON
    schema of an object) and implement ``run``; ``text_argument`` names the string argument that a
    fenced block's plain (non-JSON) body fills, for tools that take one text."""

    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, JsonValue]] = {"type": "object", "properties": {}}
    text_argument: ClassVar[str | None] = None

    def spec(self) -> ToolSpec:
        """The tool as offered to a model with native tool calling."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def text_usage(self) -> str:
        """How a model without tool calling invokes the tool: one fenced block labelled with its name."""
        example = {key: f"<{key}>" for key in _properties(self.parameters)}
        body = f"<{self.text_argument}>" if self.text_argument else json.dumps(example)
        schema = json.dumps(self.parameters)
        return f"- `{self.name}`: {self.description}\n  Arguments (JSON schema): {schema}\n" \
               f"  Call it with:\n  ```{self.name}\n  {body}\n  ```"

    def arguments_from_block(self, body: str) -> Arguments:
        """The arguments a fenced block's body stands for: a JSON object, or (for a tool with a
        ``text_argument``) the text itself. Raises ToolArgumentError."""
        stripped = body.strip()
        if stripped.startswith("{"):
            try:
                value = json.loads(stripped)
            except ValueError:
                value = None
            if isinstance(value, dict):
                return value
            if self.text_argument is None:
                raise ToolArgumentError(f"the ```{self.name} block is not a JSON object")
        if self.text_argument is not None:
            return {self.text_argument: body}
        raise ToolArgumentError(f"the ```{self.name} block must hold a JSON object of arguments")

    async def call(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        """Check the arguments against the schema, then run. Bad arguments and the tool's expected
        failures (our error types) become an error the model reads; bugs keep their traceback."""
        problems = schema_problems(arguments, self.parameters)
        if problems:
            return self.failed(arguments, f"error: {self.name}: {'; '.join(problems)}")
        try:
            return await self.run(context, arguments)
        except AESError as exc:
            return self.failed(arguments, f"error: {self.name}: {exc.message}")

    @abc.abstractmethod
    async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        """Do the work; ``arguments`` already match ``parameters``."""

    def action(self, arguments: Arguments, output: str, *, seconds: float = 0.0, exit_code: int | None = None,
               timed_out: bool = False) -> Action:
        """The trajectory's record of one call; ``command`` shows the call as the tool's name and its
        JSON arguments, so reports and failure summaries read it like a command line."""
        return Action(command=f"{self.name} {json.dumps(arguments, sort_keys=True)}", output=output,
                      exit_code=exit_code, seconds=seconds, timed_out=timed_out, tool=self.name)

    def failed(self, arguments: Arguments, text: str) -> ToolOutcome:
        """A call that did nothing: ``text`` (the error) for the model, recorded with exit code 2."""
        return ToolOutcome(text=text, action=self.action(arguments, text, exit_code=2))


class ToolArgumentError(UsageError):
    """A tool call whose arguments cannot be read; the model is told, the attempt goes on."""


class BashTool(Tool):
    """Runs a shell command in the sandbox: the solver's main tool."""

    name = "bash"
    description = "Run a bash command in the terminal and return its exit code and output."
    parameters = {"type": "object", "properties": {"command": {"type": "string", "description": "the command"}},
                  "required": ["command"]}
    text_argument = "command"

    async def call(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return self.failed(arguments, "error: bash needs a non-empty string argument 'command'")
        return await self.run(context, arguments)

    async def run(self, context: ToolContext, arguments: Arguments) -> ToolOutcome:
        command = str(arguments["command"])
        result = await context.sandbox.exec(command, timeout=context.timeout)
        text = observation(result, context.limits.observation_chars)
        # The action keeps the bare command: reports and failure summaries quote it as typed.
        return ToolOutcome(text=text, action=Action(command=command, output=text, exit_code=result.exit_code,
                                                    seconds=result.seconds, timed_out=result.timed_out))


class Toolbox:
    """Tools by name: what an agent resolves its task's ``tools`` ([metadata.autoenvscaling.agent]) against. ``factories``
    maps each name to something that makes a fresh tool (a Tool class); ``from_host`` takes the
    host's tool registry, whose classes are imported only when a task asks for them."""

    def __init__(self, factories: Mapping[str, Callable[[], Tool]]) -> None:
        self._factories = dict(factories)

    @classmethod
    def builtin(cls) -> Toolbox:
        """The core's own tools, for an agent built without a plugin host."""
        return cls({"bash": BashTool})

    @classmethod
    def from_host(cls, host: PluginHost) -> Toolbox:
        registry = host.tools

        def factory(name: str) -> Callable[[], Tool]:
            return lambda: registry.get(name)()

        return cls({name: factory(name) for name in registry.names()})

    def names(self) -> list[str]:
        return sorted(self._factories)

    def resolve(self, names: Sequence[str] | None) -> list[Tool]:
        """Fresh tools for ``names`` (None: DEFAULT_TOOLS). Raises UsageError naming the known tools."""
        wanted = list(DEFAULT_TOOLS if names is None else names)
        unknown = [n for n in wanted if n not in self._factories]
        if unknown:
            raise UsageError(unknown_tools_message(unknown, self.names()),
                             hint="install the plugin that provides it, or fix tools in [metadata.autoenvscaling.agent] of task.toml")
        return [self._factories[n]() for n in dict.fromkeys(wanted)]


def unknown_tools_message(unknown: Collection[str], known: Collection[str]) -> str:
    return f"unknown tool(s) {', '.join(map(repr, unknown))} (registered tools: {', '.join(sorted(known)) or 'none'})"


def task_tool_problems(task: Task, known: Collection[str]) -> list[str]:
    """Lint findings: tool names in ``tools`` ([metadata.autoenvscaling.agent]) (top level or a step's) that no plugin registers."""
    wanted = [("tools", task.config.agent.tools)]
    wanted += [(f"step {s.name} tools", s.agent.tools) for s in task.steps if s.agent is not None]
    out = []
    for where, names in wanted:
        unknown = [n for n in names or [] if n not in known]
        if unknown:
            out.append(f"{where}: {unknown_tools_message(unknown, known)}")
    return out


def observation(result: ExecResult, limit: int) -> str:
    """What the model sees of one command: its status, then the output with head and tail kept."""
    output = (result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr).strip("\n")
    status = "timed out (the command was killed)" if result.timed_out else f"exit code {result.exit_code}"
    return f"[{status}]\n{truncate_middle(output, limit)}" if output else f"[{status}] (no output)"


def truncate_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of long output: the command echo and the error usually live at
    the two ends, and a model needs both."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = limit * 2 // 5
    tail = limit - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[-tail:]}"


# -- argument checking --------------------------------------------------------------------------
# The subset of JSON Schema that tool arguments use (type, properties, required,
# additionalProperties, enum, pattern, items, minimum/maximum, minLength/maxLength); other keywords
# are not checked. The core needs no jsonschema dependency for it, and the messages name the field.

_TYPES: dict[str, Callable[[JsonValue], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def schema_problems(value: JsonValue, schema: Mapping[str, JsonValue], where: str = "arguments") -> list[str]:
    """Why ``value`` does not match ``schema`` (empty when it does), one short line per problem."""
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []
    if kinds and not any(_TYPES.get(str(k), lambda v: True)(value) for k in kinds):
        return [f"{where} must be {' or '.join(map(str, kinds))}, not {_json_type(value)}"]
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        return [f"{where} must be one of {json.dumps(enum)}"]
    out: list[str] = []
    if isinstance(value, str):
        out += _string_problems(value, schema, where)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = schema.get("minimum"), schema.get("maximum")
        if isinstance(low, (int, float)) and value < low:
            out.append(f"{where} must be >= {low}")
        if isinstance(high, (int, float)) and value > high:
            out.append(f"{where} must be <= {high}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        for i, item in enumerate(value):
            out += schema_problems(item, items, f"{where}[{i}]")  # type: ignore[arg-type]
    if isinstance(value, dict):
        out += _object_problems(value, schema, where)
    return out


def _string_problems(value: str, schema: Mapping[str, JsonValue], where: str) -> list[str]:
    out = []
    pattern, shortest, longest = schema.get("pattern"), schema.get("minLength"), schema.get("maxLength")
    if isinstance(pattern, str) and not re.search(pattern, value):
        out.append(f"{where} must match {pattern}")
    if isinstance(shortest, int) and len(value) < shortest:
        out.append(f"{where} must have at least {shortest} characters")
    if isinstance(longest, int) and len(value) > longest:
        out.append(f"{where} must have at most {longest} characters")
    return out


def _object_problems(value: dict[str, JsonValue], schema: Mapping[str, JsonValue], where: str) -> list[str]:
    properties = _properties(schema)
    required = schema.get("required")
    out = [f"missing required argument {name!r}" if where == "arguments" else f"{where}: missing {name!r}"
           for name in (required if isinstance(required, list) else []) if name not in value]
    if schema.get("additionalProperties") is False:
        extra = sorted(set(value) - set(properties))
        if extra:
            out.append(f"unexpected argument(s) {', '.join(map(repr, extra))} (expected: {', '.join(properties)})")
    for name, sub in properties.items():
        if name in value and isinstance(sub, dict):
            out += schema_problems(value[name], sub, name if where == "arguments" else f"{where}.{name}")
    return out


def _properties(schema: Mapping[str, JsonValue]) -> dict[str, JsonValue]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _json_type(value: JsonValue) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__
