"""Print the replay table: each recorded stream → what the SDK's own accumulator does with it →
what the product does now. Both read the same bytes from `FakeAnthropicServer` over HTTP.

    PYTHONPATH=. python tests/replay/replay_table.py > replay-table.md

The SDK column is ``client.messages.stream(...)`` + ``get_final_message()`` (its accumulator),
with any exception or warning it raised; the product column is `Agent.run` (first run, then
what the next request sends back).
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_support import FIXTURES, blocks_of, fixture_id  # noqa: E402
from test_replay_agent import notices, replay  # noqa: E402

from jupyter_toolagent.testing import FakeAnthropicServer, RecordedStream  # noqa: E402

KEY = "sk-test-replay-0123456789"


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def sdk_reading(recorded: RecordedStream) -> str:
    import anthropic

    with FakeAnthropicServer(turns=[recorded]) as server:
        async with anthropic.AsyncAnthropic(api_key=KEY, base_url=server.base_url, max_retries=0) as client:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    async with client.messages.stream(model="m", max_tokens=64,
                                                      messages=[{"role": "user", "content": "hi"}]) as stream:
                        final = await stream.get_final_message()
                        dumped = final.to_dict(mode="json")
                except Exception as exc:  # the column reports it
                    return f"raises {type(exc).__name__}: {_short(str(exc), 70)}"
            parts = []
            for block in dumped["content"]:
                if block.get("type") in ("tool_use", "server_tool_use"):
                    parts.append(f"{block['type']} {block.get('name')} {json.dumps(block.get('input'))[:40]}")
                elif block.get("type") in ("compaction",):
                    parts.append(f"compaction content={block.get('content')!r}")
                else:
                    parts.append(str(block.get("type")))
            text = f"ok: [{', '.join(parts)}] stop={dumped.get('stop_reason')}"
            serializer = [w for w in caught if "serializ" in str(w.message).lower()]
            if serializer:
                text += f"; {len(serializer)} pydantic serializer warning(s) on dump"
            return _short(text, 110)


async def product_reading(recorded: RecordedStream) -> str:
    first, _, server, _ = await replay(recorded)
    bodies = server.bodies
    sent = blocks_of(bodies[1]) if len(bodies) > 1 else []
    results = [b for b in sent if b.get("type") == "tool_result"]
    ran = sum(1 for r in results if not r.get("is_error"))
    refused = sum(1 for r in results if r.get("is_error"))
    kinds = sorted({b.get("type") for b in sent if b.get("type") not in ("text", "tool_result", "tool_use")})
    shown = [n for n in notices(first) if not n.startswith("The transcript")]
    text = f"{first.finish_reason}; calls ran {ran}, error results {refused}"
    if kinds:
        text += f"; sent back {', '.join(kinds)}"
    if shown:
        text += f"; shows: {_short(shown[0], 60)}"
    return _short(text, 160)


async def main() -> None:
    print("| recording | SDK accumulator (messages.stream) | product now |")
    print("|---|---|---|")
    for path in FIXTURES:
        recorded = RecordedStream.from_file(path)
        name = fixture_id(path) + (" (non-streaming, served as SSE)" if recorded.derived else "")
        print(f"| {name} | {await sdk_reading(recorded)} | {await product_reading(recorded)} |")


if __name__ == "__main__":
    asyncio.run(main())
