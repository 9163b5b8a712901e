"""Normalising and checking only what was appended since the last request.

Every request sends the whole transcript, normalised (`normalize`) and checked (`check`), so
doing that from scratch costs each request time in proportion to the conversation so far.
Yet between two requests the transcript usually only grows: the assistant message and its
results are appended. `IncrementalNormalizer` keeps what the last call computed and, when
the transcript it is given starts with the messages it saw, normalises and checks the new
part only. The result is the one a from-scratch pass gives, message for message (a property
test holds it to that, byte for byte, over random transcripts and random edits).

Why a kept result cannot be stale — invalidation is structural, no caller has to announce an
edit. A kept result is reused only when the transcript passed in

* starts with the *very objects* it was computed from (compared by identity, a C-speed sweep):
  any edit of the list — ``append`` aside — whether by assignment, slice assignment, ``del``,
  ``insert``, ``clear``, a repair written back, a resumed session, a refused exchange marked
  UI-only (`refusal` replaces those messages), `%agent reset`, or a new list altogether,
  breaks it, because the result holds those objects and so their ids cannot be reused;
* and each of those messages still has the same number of keys and the same ``content``
  object of the same length: a message edited in place (content replaced, blocks appended or
  removed, a ``ui_only`` marker added) is caught too;
* with the same alias map.

What is *not* looked at is the inside of a block: the transcript's rule is that a block is a
value — replaced, never mutated in place (`normalize` shares blocks into request bodies and
`RequestLog`, compaction memoises views and the context guard sizes by message identity, all
on the same rule).

Two details make the reuse exact:

* normalising merges consecutive messages of one role, so the last message of a result may
  still absorb appended messages: it is redone from the first transcript message merged
  into it (`normalize_from`);
* a tool_use at the end of the kept part is answered by what is appended, so the check
  resumes one message before that last one, from the state it had there (`scan_pairing`).
  Only a result whose check passed is kept: "the part already checked" is a valid part.

Cache breakpoints (`request_body`) are put on the body after this step, on copies, so a moved
breakpoint never touches a kept message.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .check import PairingState, PairingViolation, scan_pairing
from .normalize import normalize_from

__all__ = ["IncrementalNormalizer"]

_content = operator.methodcaller("get", "content")
_size = operator.length_hint  # len() of a list or string; 0 for a missing content, not an error


@dataclass(frozen=True, eq=False)
class _Checked:
    """One call's result, kept with what it was computed from."""

    sources: tuple[Mapping[str, Any], ...]
    """The transcript's message objects, held (so their ids stay theirs)."""
    contents: tuple[Any, ...]
    content_sizes: tuple[int, ...]
    key_counts: tuple[int, ...]
    aliases: dict[str, str]
    final: list[dict[str, Any]]
    """The normalised messages that appending cannot change (all but the last)."""
    restart: int
    """The transcript index where the last normalised message began."""
    state: PairingState
    """The check's state at the last of ``final``, which is re-checked: its answer follows."""

    def reusable_for(self, messages: Sequence[Mapping[str, Any]], aliases: Mapping[str, str]) -> bool:
        count = len(self.sources)
        if len(messages) < count or aliases != self.aliases:
            return False
        if not all(map(operator.is_, self.sources, messages)):
            return False
        try:
            # map() stops with the first (stored, shorter) sequence: only the kept prefix is read
            return (all(map(operator.is_, self.contents, map(_content, messages)))
                    and all(map(operator.eq, self.key_counts, map(len, messages)))
                    and all(map(operator.eq, self.content_sizes, map(_size, self.contents))))
        except (AttributeError, TypeError):  # a message no longer a mapping: start afresh
            return False


class IncrementalNormalizer:
    """`normalize_messages_for_api` + `check_pairing` that redoes only what was appended.

    Keeps a few results (a session normalises its transcript with the tools' aliases before a
    request, without them when a run ends, and a compacted view besides): each call reuses the
    longest one that still applies (see the module docstring) and replaces it.
    """

    MAX_KEPT = 4

    def __init__(self) -> None:
        self._kept: list[_Checked] = []

    def normalize_and_check(
        self, messages: Sequence[Mapping[str, Any]], *, aliases: Mapping[str, str] | None = None
    ) -> tuple[list[dict[str, Any]], list[PairingViolation]]:
        """``(normalize_messages_for_api(messages, aliases=aliases), check_pairing(of that))``.

        The returned list is new; its messages are shared (read-only, as with the functions
        it stands for). Raises `TypeError` on a malformed message, as they do.
        """
        alias_map = dict(aliases or {})
        base: _Checked | None = None
        for kept in self._kept:
            if (base is None or len(kept.sources) > len(base.sources)) and kept.reusable_for(messages, alias_map):
                base = kept
        final: list[dict[str, Any]] = base.final if base is not None else []
        restart = base.restart if base is not None else 0
        state = base.state if base is not None else PairingState()
        tail, last_start = normalize_from(messages, restart, alias_map)
        normalized = [*final, *tail]
        violations, resume = scan_pairing(normalized, state, keep_state_at=max(len(normalized) - 2, 0))
        if not violations and resume is not None:
            if base is not None:
                self._kept.remove(base)  # superseded: the result below covers its prefix
            self._keep(_Checked(
                sources=tuple(messages),
                contents=tuple(map(_content, messages)),
                content_sizes=tuple(map(_size, map(_content, messages))),
                key_counts=tuple(map(len, messages)),
                aliases=alias_map,
                final=normalized[:-1],
                restart=last_start,
                state=resume,
            ))
        return normalized, violations

    def clear(self) -> None:
        """Forget every kept result (memory only: a kept result never outlives an edit anyway)."""
        self._kept.clear()

    def _keep(self, checked: _Checked) -> None:
        self._kept.insert(0, checked)
        del self._kept[self.MAX_KEPT:]
