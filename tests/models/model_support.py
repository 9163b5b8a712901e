"""Helpers of the model tests (constants, body builders, stream collectors)."""

from __future__ import annotations

from typing import Any, AsyncIterator

from jupyter_toolagent.core.abort import AbortSignal
from jupyter_toolagent.testing import FakeAnthropicServer

MODEL = "claude-sonnet-5-5"
KEY = "sk-ant-api03-" + "Kq7" * 10  # key-shaped, so that scrubbing is tested for real

def make_model(server: FakeAnthropicServer, **kw: Any) -> Any:
    from jupyter_toolagent.models.anthropic import AnthropicModel

    kw.setdefault("api_key", KEY)
    return AnthropicModel(MODEL, base_url=server.base_url, **kw)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def request_body(messages: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 256, "messages": messages or [user("hi")], **kw}


async def collect(stream: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [event async for event in stream]


async def collect_until_error(model: Any, body: dict[str, Any], abort: AbortSignal | None = None) -> tuple[list[dict[str, Any]], BaseException | None]:
    events: list[dict[str, Any]] = []
    try:
        async for event in model.stream(body, abort=abort or AbortSignal()):
            events.append(event)
    except Exception as exc:  # the test inspects it
        return events, exc
    return events, None


async def allow_all(call: Any, ctx: Any, *, hook_decision: Any) -> Any:
    from jupyter_toolagent.core.permission_types import PermissionDecision

    return PermissionDecision.allow("test")


async def run_loop(model: Any, prompt: str, *tools: Any, session: Any = None, abort: AbortSignal | None = None,
                   **config: Any) -> tuple[Any, list[Any]]:
    """One run of the core's query loop (`drive_run`) with allow-all permissions and no hooks.

    The loop, the accumulator, the streaming executor and pairing are the production ones;
    only the permission engine and hook registry (tested elsewhere) are left out, as
    `Session._build_context` would bring them in.
    """
    from jupyter_toolagent.core.query import drive_run
    from jupyter_toolagent.core.read_tool_output import ReadToolOutput
    from jupyter_toolagent.core.session import RunConfig, RunRecord, Session
    from jupyter_toolagent.core.tool import ToolOptions, ToolPool, ToolUseContext

    session = session if session is not None else Session()
    abort = abort or AbortSignal()
    run_config = RunConfig(model=model, can_use_tool=allow_all, **config)
    events: list[Any] = []
    session.runs.append(RunRecord(prompt=prompt))

    def build_context() -> ToolUseContext:
        return ToolUseContext(
            tools=ToolPool([*tools, ReadToolOutput()]), can_use_tool=allow_all, abort=abort,
            messages=list(session.messages), options=ToolOptions(cwd=session.cwd), outputs=session.outputs,
            emit=events.append, session=session,
        )

    await drive_run(session, prompt, run_config, abort, events.append, build_context)
    return session, events


class TimedModel:
    """Wraps a model and notes when each event reached the loop."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.times: list[tuple[str, float]] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(self, body: dict[str, Any], *, abort: AbortSignal) -> AsyncIterator[dict[str, Any]]:
        import time

        async for event in self.inner.stream(body, abort=abort):
            self.times.append((event["type"], time.monotonic()))
            yield event
