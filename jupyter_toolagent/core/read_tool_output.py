"""`ReadToolOutput`: the way back to a result that was cut to fit the size budget, or cleared
from what is sent by a compaction (SPEC §14: the transcript keeps every result in full)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from .tool import Progress, Tool, ToolResult, ToolUseContext


class ReadToolOutputInput(BaseModel):
    tool_use_id: str = Field(description="The id of the tool call whose full output to read.")
    offset: int = Field(0, ge=0, description="Character offset to start reading at.")
    limit: int = Field(20_000, ge=1, le=50_000, description="How many characters to read.")


class ReadToolOutput(Tool[ReadToolOutputInput]):
    name = "ReadToolOutput"
    description = (
        "Read part of the full output of an earlier tool call whose result was cut because it was "
        "too long, or cleared to save context. The cut or cleared result says which tool_use_id "
        "and offset to use."
    )
    input_model = ReadToolOutputInput
    max_result_chars = 51_000  # a full 50,000-character chunk plus its header is never cut again

    def is_concurrency_safe(self, input: ReadToolOutputInput) -> bool:
        return True

    def is_read_only(self, input: ReadToolOutputInput) -> bool:
        return True

    async def call(self, input: ReadToolOutputInput, ctx: ToolUseContext, progress: Progress) -> ToolResult:
        full = ctx.outputs.get(input.tool_use_id) if ctx.outputs is not None else None
        if full is None:
            full = _result_in_transcript(ctx, input.tool_use_id)
        if full is None:
            return ToolResult(f"No stored output for tool_use_id {input.tool_use_id!r}: only results that were "
                              "cut or cleared are stored.", is_error=True)
        end = min(input.offset + input.limit, len(full))
        chunk = full[input.offset:end]
        more = f" {len(full) - end:,} characters remain: call again with offset={end}." if end < len(full) else " This is the end."
        return ToolResult(f"[characters {input.offset:,}-{end:,} of {len(full):,}.{more}]\n{chunk}")


def _result_in_transcript(ctx: ToolUseContext, tool_use_id: str) -> str | None:
    """The text of ``tool_use_id``'s result in the session's full transcript (a result cleared
    from what is sent is still there in full)."""
    session = getattr(ctx, "session", None)
    messages = getattr(session, "messages", None) or ctx.messages or []
    for message in reversed(messages):
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                inner = block.get("content")
                if isinstance(inner, str):
                    return inner
                parts = [b.get("text", "") if b.get("type") == "text" else f"[{b.get('type')} block]"
                         for b in inner or () if isinstance(b, dict)]
                return "\n".join(parts)
    return None
