"""Shared pieces of the reliability suite: a recording policy, an empty hook runner, transcript
checks. The probe tools are the core suite's (`runtime_support.probe_tools`); the counts every
test reports go through `suite_counts.report`.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.permission_types import PermissionDecision
from jupyter_toolagent.hooks import HookRegistry, RegistryHookRunner
from jupyter_toolagent.testing.validation import request_error

# --- policies and hooks ---------------------------------------------------------------------------

def empty_hooks() -> RegistryHookRunner:
    """A hook runner over an empty registry: the process-wide ``@agent_hook`` registry (what
    ``RunConfig(hooks=None)`` uses) must not leak into these runs."""
    return RegistryHookRunner(HookRegistry())


class RecordingPolicy:
    """A ``can_use_tool`` that denies the tags it is told to and records every allow by tag
    (tags are unique per call, ids may repeat)."""

    def __init__(self, denied: Iterable[str] = ()) -> None:
        self.denied = set(denied)
        self.allowed: Counter[str] = Counter()
        self.denials: Counter[str] = Counter()

    async def __call__(self, call, ctx, *, hook_decision):  # noqa: ANN001
        input = call.observable
        tag = str(input.get("tag", ""))
        if tag in self.denied:
            self.denials[tag] += 1
            return PermissionDecision.deny(f"denied {tag} by the test policy", "policy")
        self.allowed[tag] += 1
        return PermissionDecision.allow("policy")


# --- transcript checks ---------------------------------------------------------------------------

def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def assert_every_tool_use_paired_once(messages: Sequence[dict[str, Any]]) -> None:
    """The API's rules (check_pairing after normalisation) and, explicitly, exactly one
    tool_result per tool_use id, placed in the next message."""
    normalized = normalize_messages_for_api(list(messages))
    assert check_pairing(normalized) == [], check_pairing(normalized)
    for n, message in enumerate(normalized):
        if message["role"] != "assistant":
            continue
        ids = [b["id"] for b in blocks(message) if b.get("type") == "tool_use"]
        assert len(ids) == len(set(ids)), f"message {n} repeats a tool_use id: {ids}"
        if not ids:
            continue
        assert n + 1 < len(normalized), f"message {n} has tool_use blocks and no next message"
        results = [b["tool_use_id"] for b in blocks(normalized[n + 1]) if b.get("type") == "tool_result"]
        assert sorted(results) == sorted(ids), (ids, results)


def assert_bodies_valid(bodies: Iterable[Any]) -> int:
    """Every request body passes the fake server's (the API's) checks; returns how many."""
    count = 0
    for body in bodies:
        assert isinstance(body, dict)
        problem = request_error(body)
        assert problem is None, f"a request the API would refuse with 400: {problem}"
        count += 1
    return count


def first_user_text(body: dict[str, Any]) -> str:
    for message in body.get("messages", []):
        if message.get("role") == "user":
            return " ".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")
    return ""


# --- scripted notebook runs (R6) -----------------------------------------------------------------

def tool_use(name: str, **input: Any) -> dict[str, Any]:
    """A tool_use block of a scripted turn (the fake server gives it its id)."""
    return {"type": "tool_use", "name": name, "input": input}


def latest_marker(messages: Sequence[dict[str, Any]], markers: Iterable[str], default: str) -> tuple[str, int]:
    """The marker (``[a]``, ``[plan]`` …) of the latest prompt that names one, and how many
    assistant answers followed it: which play a scripted server continues, and at which turn."""
    pattern = re.compile(r"\[(" + "|".join(map(re.escape, markers)) + r")\]")
    rounds = 0
    for message in reversed(messages):
        if message["role"] == "assistant":
            rounds += 1
            continue
        found = pattern.findall(" ".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text"))
        if found:
            return found[-1], rounds
    return default, 0


def run_cells_in_kernel(cells: Sequence[str], *, workdir: Path, scratch: Path, env: dict[str, str], log: Path,
                        timeout: int, before_cell: Callable[[int], None] | None = None) -> Any:
    """Execute ``cells`` as one notebook in a fresh kernel of this interpreter (a private
    kernelspec under ``scratch``), in ``workdir`` with exactly ``env``; the kernel's stdout and
    stderr go to ``log``. ``before_cell(index)`` runs before each cell. The kernel is shut down
    on the way out; the executed notebook is returned."""
    import nbformat
    from jupyter_client import KernelManager
    from kernel_harness import kernel_spec_manager
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    ksm, name = kernel_spec_manager(sys.executable, scratch)
    km = KernelManager(kernel_name=name, kernel_spec_manager=ksm)
    client = NotebookClient(nb, km=km, timeout=timeout, allow_errors=True, kernel_name=name,
                            resources={"metadata": {"path": str(workdir)}})
    with open(log, "wb") as out, client.setup_kernel(env=env, cwd=str(workdir), stdout=out, stderr=out):
        for index, cell in enumerate(nb.cells):
            if before_cell is not None:
                before_cell(index)
            client.execute_cell(cell, index)
        client.set_widgets_metadata()
    return nb
