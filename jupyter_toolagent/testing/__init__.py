"""A fake Anthropic Messages API for tests, teaching and offline demos (SPEC §7.3).

    from jupyter_toolagent.models import tool_use_block
    from jupyter_toolagent.testing import FakeAnthropicServer, Fault

    with FakeAnthropicServer(turns=[[tool_use_block("ListVariables")], "Done."]) as server:
        server.inject(Fault.rate_limit(retry_after_ms=50))
        ...  # point ANTHROPIC_BASE_URL (or AnthropicModel(base_url=...)) at server.base_url
        server.requests  # what the client sent
"""

from __future__ import annotations

from .fake_server import FakeAnthropicServer, RecordedRequest
from .faults import Fault
from .recorded import RecordedStream
from .quickstart import quickstart_turns

__all__ = [
    "FakeAnthropicServer",
    "Fault",
    "RecordedRequest",
    "RecordedStream",
    "quickstart_turns",
]
