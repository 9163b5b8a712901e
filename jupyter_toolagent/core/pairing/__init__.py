"""tool_use/tool_result pairing: check, normalise and repair API-format transcripts (SPEC §6).

A transcript is a list of ``{"role": "user" | "assistant", "content": str | list[dict]}``.
The three functions are pure: they never modify their input and return new lists.

- `check_pairing` lists every violation with the API's own 400 text (``check``);
- `normalize_messages_for_api` builds the request's messages from the session's transcript
  (``normalize``);
- `repair_pairing` fixes a broken transcript and reports each change (``repair``);
- `IncrementalNormalizer` does the first two for a growing transcript, redoing only what was
  appended since its last call (``incremental``).

The runtime never sends a transcript for which ``check_pairing`` is not empty. These modules
import the standard library only.
"""

from __future__ import annotations

from .check import PairingViolation, ViolationKind, check_pairing
from .incremental import IncrementalNormalizer
from .normalize import normalize_messages_for_api
from .repair import MISSING_RESULT_TEXT, RepairAction, RepairKind, RepairReport, repair_pairing

__all__ = [
    "MISSING_RESULT_TEXT",
    "IncrementalNormalizer",
    "PairingViolation",
    "RepairAction",
    "RepairKind",
    "RepairReport",
    "ViolationKind",
    "check_pairing",
    "normalize_messages_for_api",
    "repair_pairing",
]
