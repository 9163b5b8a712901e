"""Which model a cell talks to, and the offline demo used when there is no key.

* ``--script VAR`` — a `ScriptedModel` from the notebook variable (a list of turns, a function
  of the request body, or a ready `Model`).
* ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_AUTH_TOKEN`` or ``ANTHROPIC_BASE_URL`` set — the real
  API (or the proxy / loopback server the base URL names) through `AnthropicModel`; the SDK
  reads those variables itself.
* neither — the offline demo: a `FakeAnthropicServer` started once per kernel (stopped at
  ``%unload_ext`` and at exit) answers with `demo_turn`, a scripted walk through a
  data-science quickstart, over the real SDK path. The cell says so plainly.
"""

from __future__ import annotations

import atexit
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Mapping

from IPython.core.error import UsageError

from ..core.model import Model

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The current Sonnet in the installed SDK's model list."""

OFFLINE_NOTICE = (
    "offline demo: scripted turns from the built-in fake server; set ANTHROPIC_API_KEY to use Claude"
)
PLACEHOLDER_KEY = "no-key-set"
"""Sent when only ANTHROPIC_BASE_URL is set (a proxy that adds its own credentials); the SDK
refuses to send a request without some key."""


@dataclass
class ModelChoice:
    model: Model
    notice: str | None = None
    """Shown at the top of the cell (the offline demo says so)."""
    owned: bool = False
    """True when the cell made the model and should close it afterwards."""


def resolve_model_name(option: str | None, configured: str) -> str:
    """``--model``, else ``%config AgentMagics.model``, else $TOOLAGENT_MODEL, else the default."""
    return option or configured or os.environ.get("TOOLAGENT_MODEL") or DEFAULT_MODEL


def has_credentials(environ: Mapping[str, str] = os.environ) -> bool:
    return bool(environ.get("ANTHROPIC_API_KEY") or environ.get("ANTHROPIC_AUTH_TOKEN"))


def choose_model(model_name: str, *, script_var: str | None, user_ns: Mapping[str, Any],
                 offline_demo: bool = True) -> ModelChoice:
    if script_var is not None:
        return ModelChoice(_scripted_model(script_var, user_ns, model_name))
    from ..models.anthropic import AnthropicModel

    if has_credentials():
        return ModelChoice(AnthropicModel(model=model_name), owned=True)
    if os.environ.get("ANTHROPIC_BASE_URL"):
        return ModelChoice(AnthropicModel(model=model_name, api_key=PLACEHOLDER_KEY), owned=True)
    if not offline_demo:
        from ..models.api_errors import missing_key_error

        raise UsageError(missing_key_error().one_line())
    server = demo_server()
    model = AnthropicModel(model=model_name, api_key="offline-demo", base_url=server.base_url)
    return ModelChoice(model, notice=OFFLINE_NOTICE, owned=True)


def _scripted_model(var: str, user_ns: Mapping[str, Any], model_name: str) -> Model:
    from ..models.scripted import ScriptedModel

    if var not in user_ns:
        raise UsageError(f"--script {var}: no variable named {var!r} in the notebook")
    turns = user_ns[var]
    if callable(getattr(turns, "stream", None)) and hasattr(turns, "model_name"):
        return turns  # a ready Model (e.g. a ScriptedModel the teacher built)
    if isinstance(turns, (str, bytes)) or not (callable(turns) or hasattr(turns, "__iter__")):
        raise UsageError(f"--script {var}: expected a list of turns or a function of the request, "
                         f"not {type(turns).__name__}")
    return ScriptedModel(turns if callable(turns) else list(turns), model=model_name)


# --------------------------------------------------------------------------------------
# the offline demo server (one per kernel)
# --------------------------------------------------------------------------------------

DEMO_SERVER_KEEPS = 20
"""Requests the demo server remembers (for a look at what was sent); it lives as long as the
kernel, and every request repeats the conversation."""

_server: Any = None
_server_lock = threading.Lock()


def demo_server() -> Any:
    """The running demo server, started on first use."""
    global _server
    with _server_lock:
        if _server is None:
            from ..testing import FakeAnthropicServer

            _server = FakeAnthropicServer(turns=demo_turn, keep=DEMO_SERVER_KEEPS).start()
            atexit.register(stop_demo_server)
        return _server


def demo_server_running() -> bool:
    return _server is not None


def stop_demo_server() -> None:
    global _server
    with _server_lock:
        server, _server = _server, None
    if server is not None:
        server.stop()


# --------------------------------------------------------------------------------------
# the demo script: a function of the request only
# --------------------------------------------------------------------------------------

_DATAFRAME_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*): .*\bDataFrame\b", re.MULTILINE)
_SCHEMA_FALLBACK = {"InspectVariable": "path", "RunPython": "code"}


def demo_turn(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The next assistant turn of the quickstart, from the request alone.

    Looks at what happened since the person's last prompt: list the variables; inspect the
    first DataFrame; ask to run a pandas + matplotlib snippet on it (or to build a small one
    when there is none) through RunPython — which needs approval; then summarise. A step whose
    tool is not offered (``--tools``, a deny rule) is skipped.
    """
    messages = body.get("messages") or []
    offered = {t["name"]: t for t in body.get("tools") or [] if isinstance(t, dict) and "name" in t}
    calls, results = _since_last_prompt(messages)
    called = [c["name"] for c in calls]
    from .offline_fix import fix_turn

    fixing = fix_turn(_last_prompt(messages), set(offered), calls, lambda name: _result_of(calls, results, name))
    if fixing is not None:
        return fixing

    if "ListVariables" in offered and "ListVariables" not in called:
        return [_text("**Offline demo** — these turns are scripted, not written by Claude. "
                      "First I look at the variables in your kernel."),
                _tool_use("ListVariables", {})]
    listing = _result_of(calls, results, "ListVariables")
    frame = _first_dataframe(listing)
    if frame and "InspectVariable" in offered and "InspectVariable" not in called:
        return [_text(f"`{frame}` is a DataFrame; let me inspect its columns and a few rows."),
                _tool_use("InspectVariable", {_field(offered, "InspectVariable"): frame})]
    if "RunPython" in offered and "RunPython" not in called:
        code = _snippet(frame)
        what = f"summarise `{frame}` and plot its first numeric column" if frame else \
            "build a small example DataFrame `demo_df` and plot it"
        return [_text(f"Now I'd like to {what}. RunPython executes code in your kernel, so it "
                      "asks for your approval first."),
                _tool_use("RunPython", {_field(offered, "RunPython"): code})]
    return [_text(_summary(calls, results))]


def _since_last_prompt(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """tool_use blocks and tool_result blocks (by id) after the person's last prompt."""
    start = 0
    for i, message in enumerate(messages):
        if message.get("role") == "user" and not _blocks(message, "tool_result"):
            start = i
    calls: list[dict[str, Any]] = []
    results: dict[str, dict[str, Any]] = {}
    for message in messages[start:]:
        calls += _blocks(message, "tool_use")
        for block in _blocks(message, "tool_result"):
            results[str(block.get("tool_use_id"))] = block
    return calls, results


def _last_prompt(messages: list[dict[str, Any]]) -> str:
    """The text of the person's last prompt (its first text block)."""
    for message in reversed(messages):
        if message.get("role") == "user" and not _blocks(message, "tool_result"):
            texts = _blocks(message, "text")
            return str(texts[0].get("text", "")) if texts else str(message.get("content") or "")
    return ""


def _blocks(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def _result_text(block: dict[str, Any] | None) -> str:
    if block is None:
        return ""
    content = block.get("content", "")
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return str(content)


def _result_of(calls: list[dict[str, Any]], results: dict[str, dict[str, Any]], name: str) -> str:
    for call in calls:
        if call.get("name") == name:
            return _result_text(results.get(str(call.get("id"))))
    return ""


def _first_dataframe(listing: str) -> str | None:
    match = _DATAFRAME_LINE.search(listing)
    return match.group(1) if match else None


def _field(offered: dict[str, Any], tool: str) -> str:
    """The tool's first required parameter (the demo does not hard-wire schemas)."""
    schema = (offered.get(tool) or {}).get("input_schema") or {}
    required = schema.get("required") or []
    return str(required[0]) if required else _SCHEMA_FALLBACK[tool]


def _snippet(frame: str | None) -> str:
    if frame:
        return (
            f"summary = {frame}.describe()\n"
            f"numeric = {frame}.select_dtypes('number')\n"
            "if not numeric.empty:\n"
            f"    numeric.iloc[:, 0].plot(kind='hist', bins=20, title='{frame}: ' + str(numeric.columns[0]))\n"
            "summary"
        )
    return (
        "import numpy as np\n"
        "import pandas as pd\n"
        "rng = np.random.default_rng(0)\n"
        "demo_df = pd.DataFrame({'x': np.arange(50), 'y': rng.normal(size=50).cumsum()})\n"
        "demo_df.plot(x='x', y='y', title='demo_df: a random walk')\n"
        "demo_df.describe()"
    )


def _summary(calls: list[dict[str, Any]], results: dict[str, dict[str, Any]]) -> str:
    lines = ["**Offline demo summary** (scripted turns, not Claude):", ""]
    for call in calls:
        result = results.get(str(call.get("id")))
        text = _result_text(result).strip()
        first = text.splitlines()[0] if text else "(no output)"
        if len(first) > 160:
            first = first[:160] + " …"
        state = "refused or failed" if result is not None and result.get("is_error") else "ran"
        lines.append(f"- `{call.get('name')}` {state}: {first}")
    if not calls:
        lines.append("- no tools were offered to this demo, so there was nothing to call.")
    lines += ["", "Every call above went through validation, permission checks and pairing exactly as "
              "with Claude. Set ANTHROPIC_API_KEY to talk to Claude."]
    return "\n".join(lines)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _tool_use(name: str, input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}
