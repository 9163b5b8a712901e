"""What a ``refusal`` stop does to the conversation (SPEC §7.1).

When the model stops with ``stop_reason: "refusal"`` the API explains why in ``stop_details``
(``{"type": "refusal", "category": "cyber", "explanation": "…"}``); the person sees that
explanation, not just the bare stop reason.

The refused exchange is not sent again. Sending it with the next cell would put the same
refused request in front of the model every time, so every later cell of the session would
meet the refusal again. Decision: everything this run added — its prompt, any turns before
the refusal (tool_use blocks and their results go together, so pairing stays valid) and the
refused response — is kept in the session (the transcript views, exports and saved sessions
still show what happened) but marked UI-only, so `normalize_messages_for_api` leaves it out of
every later request. The next cell continues from the conversation as it was before the
refused prompt.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REFUSED_KEY", "refusal_notice", "withhold_refused_exchange"]

REFUSED_KEY = "_refused"
"""Marks a withheld message in the session (private keys never reach the API)."""


def refusal_notice(stop_details: dict[str, Any] | None) -> str:
    """The cell's line for a refusal, with the API's explanation when it gave one."""
    details = stop_details or {}
    text = "The model refused to continue (stop_reason: refusal)"
    if details.get("category"):
        text += f", category: {details['category']}"
    explanation = details.get("explanation")
    text += f". {explanation}" if explanation else "."
    return text + (" This exchange is kept in the session history but will not be sent with the next "
                   "request; the conversation goes on from before this prompt.")


def withhold_refused_exchange(messages: list[dict[str, Any]], start: int) -> int:
    """Mark ``messages[start:]`` (one run's exchange) UI-only; return how many were marked.

    Messages are replaced by marked copies, not changed in place: a transcript block is never
    mutated (see `pairing_normalize`).
    """
    for index in range(start, len(messages)):
        messages[index] = {**messages[index], "ui_only": True, REFUSED_KEY: True}
    return len(messages) - start
