"""The error result of a tool call whose input was cut off (SPEC §4.2, §7.1).

One wording for both schedulers (while streaming and after the stream), so the model reads the
same sentence whichever path handled its message. ``why`` is a clause from the accumulator
(``json_problem`` or ``CUT_OFF``); it is set off with a colon, not nested in parentheses.
"""

from __future__ import annotations

__all__ = ["truncated_input_text"]


def truncated_input_text(name: str, why: str) -> str:
    return (
        f"Error: the input of this {name} call was truncated, so it was not executed: {why}. "
        "Send the call again with the complete input (keep it shorter if it was cut by max_tokens)."
    )
