"""The request bodies of one run, stored without repeating the conversation (`RunRecord.requests`).

Every request of a run carries the whole transcript so far, so keeping each body as sent makes
a run's record grow with the square of its length (a 500-request run kept hundreds of MB). Yet
consecutive bodies differ only at the end: request N+1 is request N's messages, with the last
one's cache breakpoint moved, plus the new assistant turn and its results. So each body is
stored as

* how many leading messages it shares with the previous body (compared with ``==``),
* the messages after that (the tail: usually three), copied,
* the other fields (model, tools, system …) — the previous body's stored fields when they
  are equal, so an unchanged tool list is kept once per run, not once per request,

and a full body is rebuilt on access. Stored parts are deep copies made when the body is
appended, so the log keeps showing what was sent even if the transcript is edited in place
later. A rebuilt body is equal (``==``) to the body appended, with the same key order.

Rebuilt bodies share their messages with the log and with each other: read them, do not
mutate them (copy one first to experiment with it).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

__all__ = ["RequestLog"]

_MESSAGES = "messages"


@dataclass(frozen=True, slots=True)
class _Entry:
    shared: int
    """Leading messages equal to the previous body's."""
    tail: tuple[dict[str, Any], ...]
    """The messages after those, copied when the body was appended."""
    fields: dict[str, Any]
    """Every other key of the body, in the body's key order; ``messages`` maps to ``None``
    (kept only for its position). Shared with the previous entry when equal."""
    has_messages: bool


def _common_prefix(previous: Sequence[Any], current: Sequence[Any]) -> int:
    count = min(len(previous), len(current))
    for n in range(count):
        if previous[n] != current[n]:
            return n
    return count


class RequestLog(Sequence[dict[str, Any]]):
    """An append-only sequence of request bodies whose memory grows with what each request added."""

    def __init__(self, bodies: Iterable[dict[str, Any]] = ()) -> None:
        self._entries: list[_Entry] = []
        self._last_messages: list[dict[str, Any]] = []
        """The stored messages of the last body (the list alone is ours: its items are shared)."""
        for body in bodies:
            self.append(body)

    def append(self, body: dict[str, Any]) -> None:
        """Store ``body`` (which is not modified, and may change afterwards without effect here)."""
        messages = body.get(_MESSAGES)
        has_messages = isinstance(messages, list)
        current: list[Any] = messages if isinstance(messages, list) else []
        shared = _common_prefix(self._last_messages, current)
        tail = tuple(copy.deepcopy(current[shared:]))
        fields = {key: (None if key == _MESSAGES and has_messages else value) for key, value in body.items()}
        if self._entries and self._entries[-1].fields == fields:
            fields = self._entries[-1].fields
        else:
            fields = copy.deepcopy(fields)
        self._entries.append(_Entry(shared, tail, fields, has_messages))
        self._last_messages = [*self._last_messages[:shared], *tail]

    # --- reading -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[n] for n in range(*index.indices(len(self)))]
        count = len(self._entries)
        position = index + count if index < 0 else index
        if not 0 <= position < count:
            raise IndexError("request index out of range")
        return self._body(self._entries[position], self._messages_at(position))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Front to back in one pass: each body's messages from the previous body's."""
        messages: list[dict[str, Any]] = []
        for entry in self._entries:
            messages = [*messages[:entry.shared], *entry.tail]
            yield self._body(entry, messages)

    def _messages_at(self, position: int) -> list[dict[str, Any]]:
        """Walk back from ``position`` collecting the pieces its shared prefix is made of."""
        entry = self._entries[position]
        pieces = [entry.tail]
        needed = entry.shared
        for back in range(position - 1, -1, -1):
            if needed == 0:
                break
            earlier = self._entries[back]
            if needed > earlier.shared:
                pieces.append(earlier.tail[:needed - earlier.shared])
                needed = earlier.shared
        return [message for piece in reversed(pieces) for message in piece]

    @staticmethod
    def _body(entry: _Entry, messages: list[dict[str, Any]]) -> dict[str, Any]:
        if not entry.has_messages:
            return dict(entry.fields)
        return {key: (messages if key == _MESSAGES else value) for key, value in entry.fields.items()}

    # --- comparison and display --------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if isinstance(other, RequestLog):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are not hashable

    def __repr__(self) -> str:
        return f"RequestLog({len(self)} request(s))"
