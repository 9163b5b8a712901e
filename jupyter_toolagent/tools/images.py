"""Images for the model: figures the code opened, rich display outputs, image bytes.

Figures are found through pyplot's registry only if pyplot is already imported (code that never
plots pays nothing, and no backend is chosen or switched here). Only figures that did not exist
before the code ran are rendered and then closed — closing them is what keeps the notebook's
inline backend from drawing them a second time in the cell; figures the user already had stay
open and untouched.
"""

from __future__ import annotations

import base64
import io
import json
import sys
from typing import Any

from ..core.results import image_block, sniff_image, truncate_middle

__all__ = [
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE_PX",
    "bytes_to_blocks",
    "close_new_figures",
    "figure_png",
    "mimebundle_to_blocks",
    "new_figure_blocks",
    "open_figure_numbers",
]

MAX_IMAGE_SIDE_PX = 1568
"""Larger images are scaled down by the API anyway; rendering them bigger only costs bytes."""
MAX_IMAGE_BYTES = 3_750_000
"""Base64 grows data by a third; the API refuses images over 5 MB encoded."""
MAX_TEXT_OUTPUT = 10_000


def _pyplot() -> Any:
    return sys.modules.get("matplotlib.pyplot")


def open_figure_numbers() -> set[int]:
    plt = _pyplot()
    return set(plt.get_fignums()) if plt is not None else set()


def figure_png(fig: Any, dpi: float = 100.0) -> bytes:
    """Render a matplotlib figure to PNG, scaled so its longer side stays within the API's size."""
    width, height = fig.get_size_inches()
    longest = max(width, height, 1e-6)
    dpi = min(dpi, MAX_IMAGE_SIDE_PX / longest)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


def _new_figures(before: set[int]) -> list[tuple[int, Any]]:
    plt = _pyplot()
    if plt is None:
        return []
    from matplotlib._pylab_helpers import Gcf  # pyplot's own registry; pinned by the image tests

    found = []
    for number in sorted(set(plt.get_fignums()) - before):
        manager = Gcf.get_fig_manager(number)
        if manager is not None:
            found.append((number, manager.canvas.figure))
    return found


def new_figure_blocks(before: set[int]) -> list[dict[str, Any]]:
    """PNG image blocks of the figures opened since ``before``; each is closed afterwards."""
    blocks: list[dict[str, Any]] = []
    plt = _pyplot()
    for number, fig in _new_figures(before):
        try:
            blocks.extend(bytes_to_blocks(figure_png(fig)))
        except Exception as exc:  # a figure that cannot be drawn is reported, not raised
            blocks.append({"type": "text", "text": f"(figure {number} could not be rendered: {type(exc).__name__}: {exc})"})
        finally:
            plt.close(fig)
    return blocks


def close_new_figures(before: set[int]) -> None:
    """Close figures opened since ``before`` without rendering them (the code failed)."""
    plt = _pyplot()
    for _, fig in _new_figures(before):
        plt.close(fig)


def bytes_to_blocks(data: bytes) -> list[dict[str, Any]]:
    """An image block for PNG/JPEG/GIF/WebP bytes small enough to send; otherwise a text note."""
    media = sniff_image(data)
    if media is None:
        return [{"type": "text", "text": f"<{len(data):,} bytes of binary data>"}]
    if len(data) > MAX_IMAGE_BYTES:
        return [{"type": "text", "text": f"(a {media} image of {len(data):,} bytes was too large to send)"}]
    return [image_block(data, media)]


def mimebundle_to_blocks(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Content blocks for one display output: the richest form the model can read.

    PNG and JPEG become images; otherwise markdown, JSON or plain text; HTML is used only when
    there is nothing else (it is mostly markup the model does not need).
    """
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            raw = data[mime]
            try:
                payload = base64.b64decode(raw) if isinstance(raw, str) else bytes(raw)
            except (ValueError, TypeError):
                continue
            return bytes_to_blocks(payload)
    for mime in ("text/markdown", "text/plain", "text/latex"):
        if mime in data and isinstance(data[mime], str):
            return [{"type": "text", "text": truncate_middle(data[mime], MAX_TEXT_OUTPUT)}]
    if "application/json" in data:
        return [{"type": "text", "text": truncate_middle(json.dumps(data["application/json"], default=repr), MAX_TEXT_OUTPUT)}]
    if "text/html" in data and isinstance(data["text/html"], str):
        return [{"type": "text", "text": truncate_middle(data["text/html"], MAX_TEXT_OUTPUT)}]
    kinds = ", ".join(sorted(data)) or "nothing"
    return [{"type": "text", "text": f"(a display output the model cannot read: {kinds})"}]
