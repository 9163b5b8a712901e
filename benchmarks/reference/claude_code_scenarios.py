"""Claude Code and the product on the same scripted turns, side by side (a reference, not a test).

Each scenario prepares a scratch directory, then plays the same assistant turns (tool_use blocks
written here) from `FakeAnthropicServer` to two clients:

* Claude Code, run headless (``claude -p … --output-format stream-json``) with
  ``ANTHROPIC_BASE_URL`` pointing at the loopback server, a fake key, ``HOME`` in a scratch
  folder and its outside traffic switched off;
* the product's `Agent` over the real SDK.

What each client sent back — the tool_result blocks of its next request — is printed as JSON,
one object per scenario and client. Nothing here is part of the product or its tests, and
Claude Code is never installed by the project: pass the path of a ``claude`` binary installed
elsewhere (``npm install --prefix /some/cache @anthropic-ai/claude-code``).

    python -m benchmarks.reference.claude_code_scenarios /some/cache/node_modules/.bin/claude
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from jupyter_toolagent import Agent
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block

FAKE_KEY = "sk-ant-api03-" + "reference" * 4
QUIET_ENV = {
    "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_BUG_COMMAND": "1",
}


@dataclass
class Scenario:
    name: str
    files: dict[str, str]
    turns: Callable[[Path], list[list[dict[str, Any]]]]
    """The assistant's tool_use turns, given the scratch directory (paths must be absolute)."""
    between: dict[int, Callable[[Path], None]] = field(default_factory=dict)
    """Done to the directory before turn N is served (the person editing in the next tab)."""
    allowed: str = "Read Edit Write Bash(grep:*) Bash(ls:*) Bash(sleep:*) Bash(echo:*) Bash(cat:*)"


def bash(command: str, id: str) -> dict[str, Any]:
    return tool_use_block("Bash", {"command": command, "description": command}, id=id)


SCENARIOS = [
    Scenario("grep no match beside others, then a write", {"notes.txt": "revenue is up\n"}, lambda d: [[
        bash(f"grep zzz {d}/notes.txt", "toolu_grep"), bash(f"ls {d}/missing_dir", "toolu_ls"),
        bash("sleep 0.5; echo done", "toolu_slow"),
        tool_use_block("Write", {"file_path": f"{d}/out.txt", "content": "written\n"}, id="toolu_write")]]),
    Scenario("Edit of an unread file", {"a.txt": "one\n"}, lambda d: [[
        tool_use_block("Edit", {"file_path": f"{d}/a.txt", "old_string": "one", "new_string": "two"}, id="toolu_edit")]]),
    Scenario("stale Edit (changed on disk after Read, text still matches)", {"a.txt": "one\n"}, lambda d: [
        [tool_use_block("Read", {"file_path": f"{d}/a.txt"}, id="toolu_read")],
        [tool_use_block("Edit", {"file_path": f"{d}/a.txt", "old_string": "one", "new_string": "two"},
                        id="toolu_edit")]],
        between={1: lambda d: (d / "a.txt").write_text("one, edited next door\n")}),
    Scenario("stale Write", {"a.txt": "one\n"}, lambda d: [
        [tool_use_block("Read", {"file_path": f"{d}/a.txt"}, id="toolu_read")],
        [tool_use_block("Write", {"file_path": f"{d}/a.txt", "content": "replaced\n"}, id="toolu_write")]],
        between={1: lambda d: (d / "a.txt").write_text("changed\n")}),
    Scenario("partial Read, then Edit outside the part read", {"long.txt": "".join(f"line {n}\n" for n in range(1, 51))},
             lambda d: [
        [tool_use_block("Read", {"file_path": f"{d}/long.txt", "offset": 1, "limit": 2}, id="toolu_read")],
        [tool_use_block("Edit", {"file_path": f"{d}/long.txt", "old_string": "line 40\n", "new_string": "line forty\n"},
                        id="toolu_edit")]]),
    Scenario("Write of a new file", {}, lambda d: [[
        tool_use_block("Write", {"file_path": f"{d}/new.txt", "content": "hello\n"}, id="toolu_write")]]),
    Scenario("parallel reads, then a write, then a read", {"a.txt": "A\n", "b.txt": "B\n"}, lambda d: [[
        tool_use_block("Read", {"file_path": f"{d}/a.txt"}, id="toolu_ra"),
        tool_use_block("Read", {"file_path": f"{d}/b.txt"}, id="toolu_rb"),
        tool_use_block("Edit", {"file_path": f"{d}/a.txt", "old_string": "A", "new_string": "A2"}, id="toolu_ea"),
        tool_use_block("Read", {"file_path": f"{d}/a.txt"}, id="toolu_ra2")]]),
    Scenario("a denied call", {}, lambda d: [[bash("git push origin main", "toolu_push")]]),
    Scenario("duplicate tool ids", {"a.txt": "A\n"}, lambda d: [[
        tool_use_block("Read", {"file_path": f"{d}/a.txt"}, id="toolu_dup"),
        bash("echo second", "toolu_dup")]]),
]


def conversation_turns(scenario: Scenario, directory: Path, log: list[dict[str, Any]]) -> Callable[[dict[str, Any]], Any]:
    """The turn function: requests of the main conversation (they carry the Bash tool) get the
    scenario's turns in order, then a closing text; side requests (titles, summaries) get text."""
    turns = scenario.turns(directory)

    def play(body: dict[str, Any]) -> Any:
        if not any(t.get("name") == "Bash" for t in body.get("tools", [])):
            return "ok"
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        log.append(body)
        if step in scenario.between:
            scenario.between[step](directory)
        return turns[step] if step < len(turns) else "Done."

    return play


def tool_results(bodies: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out = []
    for body in bodies[1:]:
        last = body["messages"][-1]
        content = last["content"] if isinstance(last["content"], list) else []
        out.append([{"tool_use_id": b["tool_use_id"], "is_error": bool(b.get("is_error")), "content": _text(b)}
                    for b in content if b.get("type") == "tool_result"])
    return out


def _text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
    return str(content or "")


def prepare(scenario: Scenario, root: Path) -> Path:
    directory = Path(tempfile.mkdtemp(dir=root))
    for name, text in scenario.files.items():
        (directory / name).write_text(text)
    return directory


def run_claude_code(claude: str, scenario: Scenario, root: Path) -> dict[str, Any]:
    directory = prepare(scenario, root)
    home = Path(tempfile.mkdtemp(dir=root))
    log: list[dict[str, Any]] = []
    with FakeAnthropicServer(turns=conversation_turns(scenario, directory, log), validate=False) as server:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ANTHROPIC_BASE_URL": server.base_url,
               "ANTHROPIC_API_KEY": FAKE_KEY, **QUIET_ENV}
        proc = subprocess.run(
            [claude, "-p", "Do the task.", "--output-format", "stream-json", "--verbose",
             "--allowedTools", scenario.allowed, "--max-turns", "6"],
            env=env, cwd=directory, capture_output=True, text=True, timeout=180,
        )
    return {"client": "claude-code", "exit": proc.returncode, "results": tool_results(log),
            "files": _files(directory)}


def run_product(scenario: Scenario, root: Path) -> dict[str, Any]:
    directory = prepare(scenario, root)
    log: list[dict[str, Any]] = []
    with FakeAnthropicServer(turns=conversation_turns(scenario, directory, log), validate=False) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=FAKE_KEY)
        agent = Agent(model, builtin_tools=True, cwd=directory, max_turns=6,
                      allow=["Edit", "Write", "Bash(grep:*)", "Bash(ls:*)", "Bash(sleep:*)", "Bash(echo:*)"])
        record = asyncio.run(agent.run("Do the task."))
    return {"client": "product", "finish": record.finish_reason, "results": tool_results(log),
            "files": _files(directory)}


def _files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(directory.iterdir()) if p.is_file()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("claude", help="path of the claude binary (installed outside the project)")
    parser.add_argument("--only", help="run the scenarios whose name contains this text")
    parser.add_argument("--scratch", default=tempfile.gettempdir())
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="cc-reference-", dir=args.scratch))
    for scenario in SCENARIOS:
        if args.only and args.only not in scenario.name:
            continue
        for outcome in (run_claude_code(args.claude, scenario, root), run_product(scenario, root)):
            print(json.dumps({"scenario": scenario.name, **outcome}, ensure_ascii=False))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
