"""`Agent.run_sync` over the real SDK leaves nothing for the garbage collector to close on a dead
loop: no "Event loop is closed", no unclosed-transport warning (run in a child process with
``-X dev``, which shows every ResourceWarning, plain and inside a running loop)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from jupyter_toolagent.testing import FakeAnthropicServer

PROJECT = Path(__file__).resolve().parents[2]

SCRIPT = """
import asyncio, gc, sys
from jupyter_toolagent import Agent
from jupyter_toolagent.models.anthropic import AnthropicModel
agent = Agent(AnthropicModel("claude-x", api_key="sk-test-0123456789", base_url=sys.argv[1]))
assert agent.run_sync("first").finish_reason == "end_turn"
assert agent.run_sync("second").finish_reason == "end_turn"
async def inside_a_running_loop():
    assert agent.run_sync("third").finish_reason == "end_turn"
asyncio.run(inside_a_running_loop())
gc.collect()
print("ran three times")
"""


def test_run_sync_closes_the_sdk_client_of_its_loop() -> None:
    with FakeAnthropicServer(turns=["one", "two", "three"]) as server:
        env = {**os.environ, "PYTHONPATH": str(PROJECT), "PYTHONASYNCIODEBUG": ""}
        done = subprocess.run([sys.executable, "-X", "dev", "-c", SCRIPT, server.base_url], env=env,
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran three times"
    assert "Event loop is closed" not in done.stderr
    assert "unclosed" not in done.stderr, done.stderr
