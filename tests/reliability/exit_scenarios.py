"""Runs one "the person's code calls exit()" scenario in a process of its own and prints a JSON
verdict on the last line of stdout.

A SystemExit that escapes an event loop leaves CPython 3.11's recursion bookkeeping in a state
where later ``compile()`` calls can fail ("AST constructor recursion depth mismatch"), so these
scenarios must not run inside the test process. Usage: ``python exit_scenarios.py NAME``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from jupyter_toolagent import tool
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
from jupyter_toolagent.models import ScriptedModel, tool_use_block


@tool
def parse_cli(args: str) -> str:
    """Parse command-line style arguments (argparse exits on a bad one)."""
    import argparse

    parser = argparse.ArgumentParser(prog="parse_cli")
    parser.add_argument("--n", type=int, required=True)
    return str(parser.parse_args(args.split()).n)


@tool
async def quit_now(code: int) -> str:
    """Calls exit()."""
    raise SystemExit(code)


@tool(read_only=True)
def harmless() -> str:
    """Does nothing."""
    return "ok"


async def allow(call: Any, ctx: Any, *, hook_decision: Any) -> PermissionDecision:
    return PermissionDecision.allow("test")


SCENARIOS: dict[str, tuple[dict[str, Any], bool]] = {
    "argparse": (tool_use_block("parse_cli", {"args": "--n not-a-number"}), False),
    "argparse-empty": (tool_use_block("parse_cli", {"args": ""}), False),
    "exit": (tool_use_block("quit_now", {"code": 3}), False),
    "hook": (tool_use_block("harmless", {}), True),
}


def main(name: str) -> dict[str, Any]:
    block, exiting_hook = SCENARIOS[name]
    registry = HookRegistry()
    if exiting_hook:
        @registry.hook("PreToolUse")
        def strict_hook(event: Any) -> None:
            raise SystemExit("hook gave up")

    session = Session()
    config = RunConfig(model=ScriptedModel([[block], "ok"], when_exhausted="again"),
                       tool_provider=lambda: [parse_cli, quit_now, harmless], can_use_tool=allow,
                       hooks=RegistryHookRunner(registry))

    async def both() -> list[str]:
        reasons = []
        for prompt in ("go", "and again"):
            events = [e async for e in session.run(prompt, config)]
            reasons.append(events[-1].reason)
        return reasons

    verdict: dict[str, Any] = {"escaped": None, "reasons": []}
    try:
        verdict["reasons"] = asyncio.run(both())
    except BaseException as exc:  # noqa: BLE001 - what escapes is the finding
        verdict["escaped"] = f"{type(exc).__name__}: {exc!r}"
    verdict["pairing"] = [v.message for v in check_pairing(normalize_messages_for_api(session.messages))]
    return verdict


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
