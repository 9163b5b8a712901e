"""Fix a transcript that breaks pairing, explicitly, and say what was done (SPEC §6).

A broken transcript (a run interrupted between a tool_use and its result, a hand-edited
session, a merge gone wrong) makes every later request fail with a 400, so the conversation
is stuck. `repair_pairing` makes the smallest change that satisfies `check_pairing` while
keeping what happened visible to the model, and returns a report the notebook shows, so a
repair is never silent.

Choices, safest first:

- A missing result becomes a synthetic ``is_error`` result that says it was added by repair:
  the model learns the outcome is unknown instead of believing the call never happened.
- A result found in the wrong place is moved, not dropped: one after a text block goes to the
  front of its message (the text follows it); one in a later user message of the same turn
  goes to the user message right after the tool_use.
- A tool_use whose id was already used gets a fresh id (``<id>_dup<n>``), and so does the
  result that answers it. Dropping it instead would hide a call that may have had effects,
  and could empty the assistant message and cascade into further repairs; renaming is local.
  Results are matched to tool_use blocks by position: the k-th result for an id in the next
  user turn answers the k-th tool_use with that id in the assistant message.
- Only results that answer nothing are removed: orphans (no tool_use with that id in the
  previous assistant message) and second results for an id already answered.
- Thinking blocks found after other blocks are moved, unchanged, to the front of their
  message; their content is never altered.
- A ``server_tool_use`` without its result block (a stream cut right after it) is removed from
  its assistant message: the API ran nothing the model could be told about, and kept it would
  make every later request a 400 (see `pairing_server_tools`).
- A message whose blocks were all removed or moved gets a one-line text note, so
  message indices stay stable and no empty message is sent.

A transcript that already passes `check_pairing` comes back equal and ``changed`` is False.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .check import THINKING_TYPES, TOOL_RESULT, TOOL_USE, content_blocks
from .server_tools import unpaired_server_tool_uses

__all__ = ["MISSING_RESULT_TEXT", "RepairAction", "RepairKind", "RepairReport", "repair_pairing"]

RepairKind = Literal[
    "added_missing_result",
    "removed_orphan_result",
    "removed_duplicate_result",
    "renamed_duplicate_tool_use",
    "moved_results_to_front",
    "moved_thinking_to_front",
    "added_user_message",
    "replaced_emptied_message",
    "removed_unpaired_server_tool_use",
]

MISSING_RESULT_TEXT = (
    "The result of this tool call was missing from the transcript and this placeholder was "
    "added by repair_pairing: whether the tool ran, and what it returned, is unknown."
)
EMPTIED_MESSAGE_TEXT = "(repair_pairing removed or moved the tool_result blocks that were here.)"
EMPTIED_ASSISTANT_TEXT = "(repair_pairing removed a server tool call whose result never arrived.)"


@dataclass(frozen=True)
class RepairAction:
    """One change made by `repair_pairing`.

    ``message_index`` points into ``RepairReport.messages`` (the repaired list);
    ``original_index`` is the same message's index in the input, or ``None`` for a message
    the repair inserted. ``explanation`` is one sentence meant for a person.
    """

    kind: RepairKind
    message_index: int
    tool_use_id: str | None
    explanation: str
    original_index: int | None = None


@dataclass(frozen=True)
class RepairReport:
    """The repaired transcript and every change made to obtain it."""

    messages: list[dict[str, Any]]
    actions: list[RepairAction] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.actions)

    def summary(self) -> str:
        """Plain text for display: one line per change, or a line saying nothing was needed."""
        if not self.actions:
            return "No repair needed: every tool_use already has exactly one tool_result."
        lines = [f"repair_pairing made {len(self.actions)} change(s):"]
        for action in self.actions:
            where = f"messages.{action.message_index}"
            if action.original_index is None:
                where += " (inserted)"
            elif action.original_index != action.message_index:
                where += f" (input messages.{action.original_index})"
            lines.append(f"- {where} [{action.kind}]: {action.explanation}")
        return "\n".join(lines)


def _missing_result(tool_use_id: Any) -> dict[str, Any]:
    return {"type": TOOL_RESULT, "tool_use_id": tool_use_id, "is_error": True, "content": MISSING_RESULT_TEXT}


class _FreshIds:
    """Ids guaranteed not to occur anywhere in the transcript (nor to be handed out twice)."""

    def __init__(self, taken: set[Any]) -> None:
        self._taken = taken
        self._next: dict[str, int] = {}

    def derive(self, tool_use_id: Any) -> str:
        base = tool_use_id if isinstance(tool_use_id, str) and tool_use_id else "toolu_repaired"
        number = self._next.get(base, 1)
        while f"{base}_dup{number}" in self._taken:
            number += 1
        self._next[base] = number + 1
        fresh = f"{base}_dup{number}"
        self._taken.add(fresh)
        return fresh


@dataclass
class _Turn:
    """The tool_use blocks of one assistant message, waiting for their results."""

    index: int  # of the assistant message in the repaired list
    order: list[Any] = field(default_factory=list)  # effective ids, block order
    slots: dict[Any, deque[Any]] = field(default_factory=dict)  # id as written -> effective ids


def _all_ids(messages: Sequence[Mapping[str, Any]]) -> set[Any]:
    taken: set[Any] = set()
    for index, message in enumerate(messages):
        for block in content_blocks(message, index):
            if block.get("type") == TOOL_USE:
                taken.add(block.get("id"))
            elif block.get("type") == TOOL_RESULT:
                taken.add(block.get("tool_use_id"))
    return taken


class _Repairer:
    """Builds the repaired list message by message; one instance per `repair_pairing` call."""

    def __init__(self, source: list[dict[str, Any]]) -> None:
        self.source = source
        self.out: list[dict[str, Any]] = []
        self.actions: list[RepairAction] = []
        self.seen_tool_use_ids: set[Any] = set()
        self.fresh = _FreshIds(_all_ids(source))

    def act(self, kind: RepairKind, at: int, tool_use_id: Any, explanation: str, original: int | None) -> None:
        self.actions.append(RepairAction(kind, at, tool_use_id, explanation, original))

    def assistant(self, i: int) -> _Turn:
        message = self.source[i]
        at = len(self.out)
        turn = _Turn(index=at)
        self.out.append(message)
        if isinstance(message["content"], str):
            return turn
        blocks = list(message["content"])
        changed = False
        if blocks and blocks[0].get("type") not in THINKING_TYPES and any(
            b.get("type") in THINKING_TYPES for b in blocks
        ):
            blocks = [b for b in blocks if b.get("type") in THINKING_TYPES] + [
                b for b in blocks if b.get("type") not in THINKING_TYPES
            ]
            changed = True
            self.act("moved_thinking_to_front", at, None,
                     "moved the thinking blocks, unchanged, to the start of the assistant message, "
                     "where the API requires them.", i)
        if i + 1 < len(self.source):
            unpaired = set(unpaired_server_tool_uses(blocks))
            for k in sorted(unpaired):
                self.act("removed_unpaired_server_tool_use", at, blocks[k].get("id"),
                         f"removed the {blocks[k].get('name') or 'server'} server tool use {blocks[k].get('id')}: "
                         "its result block never arrived (the API rejects a server tool use without it).", i)
            if unpaired:
                blocks = [b for k, b in enumerate(blocks) if k not in unpaired]
                blocks = blocks or [{"type": "text", "text": EMPTIED_ASSISTANT_TEXT}]
                changed = True
        for k, block in enumerate(blocks):
            if block.get("type") != TOOL_USE:
                continue
            written = effective = block.get("id")
            if written in self.seen_tool_use_ids:
                effective = self.fresh.derive(written)
                blocks[k] = {**block, "id": effective}
                changed = True
                self.act("renamed_duplicate_tool_use", at, written,
                         f"tool_use id {written} was already used earlier, so this call was renamed "
                         f"{effective} (as is the result that answers it) to keep both calls visible.", i)
            self.seen_tool_use_ids.add(effective)
            turn.order.append(effective)
            turn.slots.setdefault(written, deque()).append(effective)
        if changed:
            message["content"] = blocks
        return turn

    def add_user_message(self, turn: _Turn) -> None:
        at = len(self.out)
        self.out.append({"role": "user", "content": [_missing_result(i) for i in turn.order]})
        self.act("added_user_message", at, None,
                 f"messages.{turn.index} ends its turn with tool_use blocks and no user message "
                 f"follows, so one was inserted to hold their results: {', '.join(map(str, turn.order))}.",
                 None)
        for tool_use_id in turn.order:
            self.act("added_missing_result", at, tool_use_id,
                     f"tool_use {tool_use_id} had no tool_result; added an error result saying it was "
                     "missing.", None)

    def user_turn(self, indices: range, turn: _Turn | None) -> None:
        """Repair the consecutive user messages ``indices`` that follow ``turn`` (if any).

        All results answering ``turn`` end up, first, in the first of these messages.
        """
        base = len(self.out)
        slots = turn.slots if turn else {}
        results: list[Mapping[str, Any]] = []
        answered: set[Any] = set()
        rest: list[list[Mapping[str, Any]]] = []
        for w, i in enumerate(indices):
            at = base + w
            others: list[Mapping[str, Any]] = []
            for block in content_blocks(self.source[i], i):
                if block.get("type") != TOOL_RESULT:
                    others.append(block)
                    continue
                written = block.get("tool_use_id")
                queue = slots.get(written)
                if queue:
                    effective = queue.popleft()
                    results.append(block if effective == written else {**block, "tool_use_id": effective})
                    answered.add(effective)
                    if w > 0:
                        self.act("moved_results_to_front", base, effective,
                                 f"moved the tool_result for {effective} here from messages.{at}, "
                                 f"because results must open the message right after the tool_use.", indices[0])
                    elif others:
                        self.act("moved_results_to_front", at, effective,
                                 f"moved the tool_result for {effective} to the start of the message, "
                                 "ahead of the blocks that preceded it (they now follow the results).", i)
                elif written in slots:
                    self.act("removed_duplicate_result", at, written,
                             f"removed a second tool_result for {written}: each tool_use takes exactly "
                             "one result.", i)
                else:
                    self.act("removed_orphan_result", at, written,
                             f"removed a tool_result for {written}: the previous message has no tool_use "
                             "with that id.", i)
            rest.append(others)
        missing = [i for i in (turn.order if turn else ()) if i not in answered]
        for tool_use_id in missing:
            self.act("added_missing_result", base, tool_use_id,
                     f"tool_use {tool_use_id} (messages.{base - 1}) had no tool_result; added an error "
                     "result saying it was missing.", indices[0])
        rest[0] = [*results, *(_missing_result(i) for i in missing), *rest[0]]
        for w, i in enumerate(indices):
            self.out.append(self._with_blocks(i, rest[w], base + w))

    def _with_blocks(self, i: int, blocks: list[Any], at: int) -> dict[str, Any]:
        message = self.source[i]
        if blocks == list(content_blocks(message, i)):
            return message
        if not blocks:
            blocks = [{"type": "text", "text": EMPTIED_MESSAGE_TEXT}]
            self.act("replaced_emptied_message", at, None,
                     "every block of this message was a tool_result that was removed or moved, so a "
                     "short note keeps the message from being empty.", i)
        message["content"] = blocks
        return message


def repair_pairing(messages: Sequence[Mapping[str, Any]]) -> RepairReport:
    """Return a repaired copy of ``messages`` that passes `check_pairing`, and what changed.

    The input is never modified. See the module docstring for the rules and why they were
    chosen; ``report.summary()`` describes the changes for a person.
    """
    for index, message in enumerate(messages):
        content_blocks(message, index)  # reject malformed input before copying
    source = [copy.deepcopy(dict(message)) for message in messages]
    repairer = _Repairer(source)
    i = 0
    while i < len(source):
        role = source[i].get("role")
        if role == "user":
            repairer.user_turn(range(i, i + 1), None)
            i += 1
            continue
        if role != "assistant":
            repairer.out.append(source[i])
            i += 1
            continue
        turn = repairer.assistant(i)
        end = i + 1
        while end < len(source) and source[end].get("role") == "user":
            end += 1
        if end > i + 1:
            repairer.user_turn(range(i + 1, end), turn)
        elif turn.order:
            repairer.add_user_message(turn)
        i = end
    actions = sorted(repairer.actions, key=lambda action: action.message_index)  # stable
    return RepairReport(messages=repairer.out, actions=actions)
