"""Models: where assistant turns come from (the API over the official SDK, or a script).

`AnthropicModel` is exported lazily: importing the `anthropic` SDK takes seconds, and scripted
runs, the views and the tests of the core do not need it.
"""

from __future__ import annotations

from typing import Any

from ..core.model import Model, StreamEvent
from .pricing import Cost, estimate_cost, format_cost, price_unknown_reason
from .scripted import ScriptedModel
from .turns import ScriptedTurn, text_block, thinking_block, tool_use_block
from .stream_events import estimate_tokens, message_stream_events, new_message_id, new_request_id, new_tool_use_id

__all__ = [
    "AnthropicModel",
    "Cost",
    "Model",
    "ScriptedModel",
    "ScriptedTurn",
    "StreamEvent",
    "estimate_cost",
    "estimate_tokens",
    "format_cost",
    "message_stream_events",
    "new_message_id",
    "new_request_id",
    "new_tool_use_id",
    "price_unknown_reason",
    "text_block",
    "thinking_block",
    "tool_use_block",
]


def __getattr__(name: str) -> Any:
    if name == "AnthropicModel":
        from .anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
