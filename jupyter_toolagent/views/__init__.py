"""Teaching and debugging views (SPEC §9), independent of IPython.

Each view is a plain object with a text and an HTML form (``to_text()``, ``to_html()``,
``_repr_mimebundle_()``; ``str(view)`` is the text), so a notebook shows the HTML and a
terminal or a saved notebook still shows something readable.

- `TranscriptView` — ``%agent transcript``: messages with each tool_use beside its tool_result.
- `RawView` — ``%agent raw``: each request and response of a run, and what changed between them.
- `ScheduleView` — which calls shared a batch, when each waited and ran.
- `PairingCheckView` — ``%agent check``: the API's verdict on a transcript.
- `RepairView` — what `repair_pairing` changed.
"""

from __future__ import annotations

from .pairing import PairingCheckView, RepairView
from .raw import RawView
from .schedule import ScheduleView
from .transcript import TranscriptView

__all__ = ["PairingCheckView", "RawView", "RepairView", "ScheduleView", "TranscriptView"]
