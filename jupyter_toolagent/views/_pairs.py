"""Which tool_result answers which tool_use, and which violations belong where — for display.

`check_pairing` says what is wrong in the API's words; a person also needs to see what is
right: each call beside its result, where each sits (``messages.N.content.K``), and, for a
result the API would not count, why. This module matches them the way the API does (a result
answers a tool_use of the immediately previous assistant message, and counts only in the
leading run of tool_result blocks) and never raises: a view of a broken transcript is exactly
when it is needed, so anything unreadable is recorded as a problem and shown as stored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.pairing.check import PairingViolation, check_pairing, content_blocks

__all__ = ["PairIndex", "ResultInfo", "ToolPair", "index_pairs"]


@dataclass
class ResultInfo:
    """One tool_result block and how the API reads it."""

    message_index: int
    content_index: int
    block: Mapping[str, Any]
    tool_use_id: Any
    is_error: bool
    counted: bool
    note: str = ""
    """Why it is not counted, or what it would have answered (empty when counted)."""
    pair: "ToolPair | None" = None

    @property
    def path(self) -> str:
        return f"messages.{self.message_index}.content.{self.content_index}"


@dataclass
class ToolPair:
    """One tool_use block and every tool_result that refers to it from the next message."""

    tool_use_id: Any
    name: str
    input: Any
    message_index: int
    content_index: int
    results: list[ResultInfo] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"messages.{self.message_index}.content.{self.content_index}"

    @property
    def result(self) -> ResultInfo | None:
        """The result the API counts for this call, if any."""
        return next((r for r in self.results if r.counted), None)


@dataclass
class PairIndex:
    messages: Sequence[Any]
    blocks: list[Sequence[Mapping[str, Any]] | None]
    """Per message: its blocks, or ``None`` when the message cannot be read."""
    pairs: list[ToolPair] = field(default_factory=list)
    use_at: dict[tuple[int, int], ToolPair] = field(default_factory=dict)
    result_at: dict[tuple[int, int], ResultInfo] = field(default_factory=dict)
    violations: list[PairingViolation] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    message_problems: dict[int, str] = field(default_factory=dict)

    by_message: dict[int, list[PairingViolation]] = field(default_factory=dict)

    def violations_of_message(self, n: int) -> list[PairingViolation]:
        """Violations that name message ``n`` as a whole, or no block that is shown."""
        count = len(self.blocks[n] or ()) if n < len(self.blocks) else 0
        return [v for v in self.by_message.get(n, ()) if v.content_index is None or v.content_index >= count]

    def violations_of_block(self, n: int, k: int) -> list[PairingViolation]:
        return [v for v in self.by_message.get(n, ()) if v.content_index == k]

    def stray_violations(self) -> list[PairingViolation]:
        """Violations naming a message that does not exist (given with other messages)."""
        return [v for v in self.violations if not 0 <= v.message_index < len(self.messages)]


def _read_blocks(message: Any, n: int) -> Sequence[Mapping[str, Any]]:
    return content_blocks(message, n)


def _key(value: Any) -> Any:
    """An id usable as a dict key even when a hand-edited transcript holds a list or dict there."""
    try:
        hash(value)
    except TypeError:
        return ("unhashable", repr(value))
    return value


def index_pairs(messages: Sequence[Any], violations: Sequence[PairingViolation] | None = None) -> PairIndex:
    """Match every tool_use with its results; attach the violations (computed if not given)."""
    index = PairIndex(messages=messages, blocks=[])
    for n, message in enumerate(messages):
        try:
            index.blocks.append(_read_blocks(message, n))
        except Exception as exc:  # shown as stored, with the reason
            index.blocks.append(None)
            index.message_problems[n] = str(exc)
    if violations is None:
        try:
            violations = check_pairing(messages)
        except Exception as exc:
            violations = []
            index.problems.append(f"check_pairing cannot read this transcript: {exc}")
    index.violations = list(violations)
    for violation in index.violations:
        index.by_message.setdefault(violation.message_index, []).append(violation)

    first_use: dict[Any, ToolPair] = {}
    previous: dict[Any, list[ToolPair]] = {}
    for n, blocks in enumerate(index.blocks):
        role = messages[n].get("role") if isinstance(messages[n], Mapping) else None
        if blocks is None:
            previous = {}
            continue
        if role == "assistant":
            previous = {}
            for k, block in enumerate(blocks):
                if block.get("type") != "tool_use":
                    continue
                pair = ToolPair(block.get("id"), str(block.get("name", "")), block.get("input"), n, k)
                index.pairs.append(pair)
                index.use_at[(n, k)] = pair
                previous.setdefault(_key(pair.tool_use_id), []).append(pair)
                first_use.setdefault(_key(pair.tool_use_id), pair)
            continue
        if role == "user":
            _match_results(index, n, blocks, previous, first_use)
        previous = {}
    return index


def _match_results(index: PairIndex, n: int, blocks: Sequence[Mapping[str, Any]],
                   previous: Mapping[Any, list[ToolPair]], first_use: Mapping[Any, ToolPair]) -> None:
    leading = True
    breaker = ""
    for k, block in enumerate(blocks):
        if block.get("type") != "tool_result":
            if leading:
                leading, breaker = False, str(block.get("type"))
            continue
        tool_use_id = block.get("tool_use_id")
        info = ResultInfo(n, k, block, tool_use_id, block.get("is_error") is True, counted=False)
        candidates = previous.get(_key(tool_use_id))
        if candidates:
            pair = next((p for p in candidates if not p.results), candidates[0])
            info.pair = pair
            if pair.result is not None:
                info.note = "not counted: a second result for this tool_use (each takes exactly one)"
            elif not leading:
                info.note = (f"not counted: it comes after a {breaker} block, and the API only counts "
                             "tool_result blocks at the start of the message")
            else:
                info.counted = True
            pair.results.append(info)
        else:
            earlier = first_use.get(_key(tool_use_id))
            info.note = (f"orphan: its tool_use is at {earlier.path}, not in the previous message"
                         if earlier is not None else "orphan: no tool_use has this id")
        index.result_at[(n, k)] = info
