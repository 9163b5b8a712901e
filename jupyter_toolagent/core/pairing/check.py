"""Reproduce the Messages API's tool_use/tool_result pairing checks (SPEC §6, Appendix A).

The API rejects a request whose transcript breaks pairing with an HTTP 400
``invalid_request_error`` and reports only the first problem it finds. A person debugging a
transcript wants all of them at once, so `check_pairing` returns every violation in message
order, each carrying the exact text the API would send back: the first element is what the
API would say. The fake server (§7.3) answers with ``violations[0].message`` verbatim.

Client tools pair across messages (``tool_use`` in an assistant message, ``tool_result`` at
the start of the next user message). Server tools (``server_tool_use`` and its
``web_search_tool_result`` / ``code_execution_tool_result`` / … block) pair inside one
assistant message; the rule and its exceptions are in `pairing_server_tools`.

This module and its ``pairing_*`` siblings depend on the standard library only, so the fake
server, scripts and tests can use them without pulling in the rest of the package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .server_tools import server_tool_text, unpaired_server_tool_uses

__all__ = ["PairingState", "PairingViolation", "ViolationKind", "check_pairing", "content_blocks", "scan_pairing"]

TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})

ViolationKind = Literal[
    "missing_result",
    "orphan_result",
    "duplicate_tool_use_id",
    "duplicate_tool_result",
    "thinking_not_first",
    "server_tool_without_result",
]


@dataclass(frozen=True)
class PairingViolation:
    """One reason the API would reject the transcript.

    ``message_index`` and ``content_index`` are the ``N`` and ``K`` of the API's
    ``messages.N.content.K`` prefix (``content_index`` is ``None`` when the API names only the
    message). ``message`` is the API's error text, word for word.
    """

    message_index: int
    content_index: int | None
    kind: ViolationKind
    tool_use_ids: tuple[str, ...]
    message: str


def content_blocks(message: Any, message_index: int) -> Sequence[Mapping[str, Any]]:
    """The blocks of one message, reading string content as one text block (as the API does).

    Raises `TypeError` on anything that is not API-format JSON, because silently skipping a
    malformed block would let a broken transcript look valid.
    """
    if not isinstance(message, Mapping):
        raise TypeError(
            f"messages[{message_index}] is a {type(message).__name__}, expected a dict "
            "with 'role' and 'content'"
        )
    content = message.get("content")
    if isinstance(content, str):
        return ({"type": "text", "text": content},)
    if not isinstance(content, (list, tuple)):
        raise TypeError(
            f"messages[{message_index}].content is a {type(content).__name__}, "
            "expected a string or a list of content blocks"
        )
    for block_index, block in enumerate(content):
        if not isinstance(block, Mapping):
            hint = " (convert SDK objects with .model_dump())" if hasattr(block, "model_dump") else ""
            raise TypeError(
                f"messages[{message_index}].content[{block_index}] is a "
                f"{type(block).__name__}, expected a dict{hint}"
            )
    return content


def _missing_text(n: int, ids: Sequence[str]) -> str:
    return (
        f"messages.{n}: `tool_use` ids were found without `tool_result` blocks immediately "
        f"after: {', '.join(map(str, ids))}. Each `tool_use` block must have a corresponding "
        "`tool_result` block in the next message."
    )


def _orphan_text(n: int, k: int, ids: Sequence[str]) -> str:
    return (
        f"messages.{n}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
        f"{', '.join(map(str, ids))}. Each `tool_result` block must have a corresponding "
        "`tool_use` block in the previous message."
    )


def _thinking_text(n: int, found: str) -> str:
    return (
        f"messages.{n}.content.0: If an assistant message contains any thinking blocks, "
        f"the first block must be thinking or redacted_thinking. Found {found}."
    )


def _duplicate_use_text(n: int, k: int) -> str:
    return f"messages.{n}.content.{k}: `tool_use` ids must be unique"


def _duplicate_result_text(n: int, k: int, tool_use_id: str) -> str:
    return (
        f"messages.{n}.content.{k}: each tool_use must have a single result. "
        f"Found multiple `tool_result` blocks with id: {tool_use_id}"
    )


def _leading_result_ids(blocks: Sequence[Mapping[str, Any]]) -> set[Any]:
    """Ids answered by a message: only the run of tool_result blocks at its very start counts."""
    answered: set[Any] = set()
    for block in blocks:
        if block.get("type") != TOOL_RESULT:
            break
        answered.add(block.get("tool_use_id"))
    return answered


def _check_assistant(
    n: int,
    blocks: Sequence[Mapping[str, Any]],
    next_message: Any,
    seen_tool_use_ids: set[Any],
) -> tuple[list[PairingViolation], dict[Any, None]]:
    """Violations found at assistant message ``n``, plus its tool_use ids in block order."""
    found: list[PairingViolation] = []
    if blocks and blocks[0].get("type") not in THINKING_TYPES:
        if any(block.get("type") in THINKING_TYPES for block in blocks):
            found.append(
                PairingViolation(n, 0, "thinking_not_first", (), _thinking_text(n, str(blocks[0].get("type"))))
            )
    tool_use_ids: dict[Any, None] = {}  # ordered set
    for k, block in enumerate(blocks):
        if block.get("type") != TOOL_USE:
            continue
        tool_use_id = block.get("id")
        if tool_use_id in seen_tool_use_ids:
            found.append(
                PairingViolation(n, k, "duplicate_tool_use_id", (str(tool_use_id),), _duplicate_use_text(n, k))
            )
        seen_tool_use_ids.add(tool_use_id)
        tool_use_ids[tool_use_id] = None
    if next_message is not None:  # a paused turn is sent back last, unfinished (pairing_server_tools)
        for k in unpaired_server_tool_uses(blocks):
            found.append(PairingViolation(n, None, "server_tool_without_result", (str(blocks[k].get("id")),),
                                          server_tool_text(n, blocks[k])))
    if tool_use_ids:
        answered: set[Any] = set()
        if isinstance(next_message, Mapping) and next_message.get("role") == "user":
            answered = _leading_result_ids(content_blocks(next_message, n + 1))
        missing = tuple(str(i) for i in tool_use_ids if i not in answered)
        if missing:
            found.append(PairingViolation(n, None, "missing_result", missing, _missing_text(n, missing)))
    return found, tool_use_ids


def _check_user(
    n: int, blocks: Sequence[Mapping[str, Any]], allowed: Mapping[Any, None]
) -> list[PairingViolation]:
    """Violations at user message ``n``; ``allowed`` = tool_use ids of the previous message."""
    found: list[PairingViolation] = []
    orphans: dict[Any, None] = {}
    first_orphan_index: int | None = None
    results_seen: set[Any] = set()
    reported_duplicates: set[Any] = set()
    for k, block in enumerate(blocks):
        if block.get("type") != TOOL_RESULT:
            continue
        tool_use_id = block.get("tool_use_id")
        if tool_use_id not in allowed:
            orphans[tool_use_id] = None
            if first_orphan_index is None:
                first_orphan_index = k
        elif tool_use_id in results_seen:
            if tool_use_id not in reported_duplicates:
                reported_duplicates.add(tool_use_id)
                found.append(
                    PairingViolation(
                        n, k, "duplicate_tool_result", (str(tool_use_id),),
                        _duplicate_result_text(n, k, str(tool_use_id)),
                    )
                )
        results_seen.add(tool_use_id)
    if first_orphan_index is not None:
        ids = tuple(map(str, orphans))
        found.append(
            PairingViolation(n, first_orphan_index, "orphan_result", ids, _orphan_text(n, first_orphan_index, ids))
        )
        found.sort(key=lambda v: -1 if v.content_index is None else v.content_index)
    return found


def check_pairing(messages: Sequence[Mapping[str, Any]]) -> list[PairingViolation]:
    """Every pairing violation the API would reject, in message order; ``[]`` means valid.

    The API stops at its first error, so ``check_pairing(m)[0].message`` is the text of the
    400 it would return. Within one message, block-level problems come first in block order,
    and an assistant message's ``missing_result`` (which names the whole message) comes last.

    Rules (Appendix A): a tool_use is answered only by a tool_result in the leading run of
    tool_result blocks of the very next message, which must be a user message, so a text
    block placed before the results, or a tool_use in the last message, leaves the ids
    "missing"; a tool_result must name a tool_use of the previous (assistant) message;
    tool_use ids are unique across the transcript; one result per id per message; an
    assistant message holding thinking blocks must start with one; a ``server_tool_use`` in
    an assistant message that is not the last has its result block in that same message.
    Runs in linear time.
    The input is never modified.
    """
    return scan_pairing(messages, PairingState())[0]


@dataclass(frozen=True)
class PairingState:
    """What the check knows on reaching message ``index``: the tool_use ids met before it (ids
    are unique across the transcript) and those of message ``index - 1`` when it is an
    assistant message (the ids a result at ``index`` may answer).

    Resuming `scan_pairing` from a state taken on a valid transcript re-checks only what
    follows (`incremental`); the scan never mutates a state it is given.
    """

    index: int = 0
    seen_tool_use_ids: frozenset[Any] = frozenset()
    previous_tool_use_ids: Mapping[Any, None] = field(default_factory=dict)


def scan_pairing(
    messages: Sequence[Mapping[str, Any]], state: PairingState, *, keep_state_at: int | None = None
) -> tuple[list[PairingViolation], PairingState | None]:
    """`check_pairing` of ``messages`` from ``state.index`` on, with what came before taken
    from ``state``; also the state on reaching ``keep_state_at`` (None when the scan does not
    reach it). Violations found before ``state.index`` are not repeated: the caller knows
    that part (it was valid).
    """
    violations: list[PairingViolation] = []
    seen_tool_use_ids: set[Any] = set(state.seen_tool_use_ids)
    previous_tool_use_ids: Mapping[Any, None] = state.previous_tool_use_ids
    kept: PairingState | None = None
    count = len(messages)
    for n in range(state.index, count):
        if n == keep_state_at:
            kept = PairingState(n, frozenset(seen_tool_use_ids), previous_tool_use_ids)
        message = messages[n]
        blocks = content_blocks(message, n)
        role = message.get("role")
        if role == "assistant":
            next_message = messages[n + 1] if n + 1 < count else None
            found, previous_tool_use_ids = _check_assistant(n, blocks, next_message, seen_tool_use_ids)
            violations.extend(found)
            continue
        if role == "user":
            violations.extend(_check_user(n, blocks, previous_tool_use_ids))
        previous_tool_use_ids = {}
    if keep_state_at == count and kept is None:
        kept = PairingState(count, frozenset(seen_tool_use_ids), previous_tool_use_ids)
    return violations, kept
