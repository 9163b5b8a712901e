"""The views package as a whole: public names, both display forms, no IPython, theme-aware CSS."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from view_support import has_html

import jupyter_toolagent.views as views
from jupyter_toolagent.core.pairing import repair_pairing
from jupyter_toolagent.core.session import RunRecord
from jupyter_toolagent.views import PairingCheckView, RawView, RepairView, ScheduleView, TranscriptView
from jupyter_toolagent.views._base import STYLESHEET, cut_middle

TRANSCRIPT = [
    {"role": "user", "content": "go"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_A", "name": "Read", "input": {}}]},
    {"role": "user", "content": [{"type": "text", "text": "x"}]},
]
BODY = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}]}

ALL_VIEWS = {
    "transcript": lambda: TranscriptView(TRANSCRIPT),
    "check": lambda: PairingCheckView.of(TRANSCRIPT),
    "repair": lambda: RepairView(repair_pairing(TRANSCRIPT), before=TRANSCRIPT),
    "raw": lambda: RawView(RunRecord(prompt="go", requests=[BODY, BODY])),
    "schedule": lambda: ScheduleView([]),
}


def test_the_public_names_are_pinned() -> None:
    assert views.__all__ == ["PairingCheckView", "RawView", "RepairView", "ScheduleView", "TranscriptView"]
    assert all(hasattr(views, name) for name in views.__all__)


@pytest.mark.parametrize("make", ALL_VIEWS.values(), ids=list(ALL_VIEWS))
def test_every_view_has_a_text_and_an_html_form(make) -> None:  # noqa: ANN001
    view = make()
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/plain"] == view.to_text() == str(view)
    assert bundle["text/html"] == view.to_html()
    assert view.to_html().startswith('<div class="tav"><style>') and view.to_html().endswith("</div>")
    assert view.to_text().strip() and not has_html(view.to_text())
    assert repr(view).startswith(f"<{type(view).__name__}: ")


def test_importing_and_rendering_the_views_never_loads_ipython() -> None:
    script = (
        "import sys\n"
        "from jupyter_toolagent.views import TranscriptView, PairingCheckView, RepairView, RawView, ScheduleView\n"
        "m = [{'role': 'user', 'content': 'hi'}]\n"
        "for v in (TranscriptView(m), PairingCheckView.of(m), RepairView.of(m), RawView(None), ScheduleView(None)):\n"
        "    v.to_html(); v.to_text()\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in {'IPython', 'ipywidgets', 'ipykernel'})\n"
        "print(bad)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_stylesheet_follows_the_jupyterlab_theme_with_fallbacks() -> None:
    variables = re.findall(r"var\((--jp-[a-z0-9-]+)(,[^)]*)?\)", STYLESHEET)
    assert len(variables) > 20
    assert all(fallback for _, fallback in variables), [v for v, f in variables if not f]
    # highlights are a theme colour mixed with transparency: readable on light and dark themes
    assert "color-mix(in srgb, var(--jp-error-color1" in STYLESHEET and "transparent)" in STYLESHEET


@pytest.mark.parametrize("length, limit", [(20, 9), (20, 10), (5_000, 2_000), (3, 2)])
def test_cut_middle_shows_limit_characters_of_both_ends_and_counts_the_rest(length: int, limit: int) -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(length))
    out = cut_middle(text, limit)
    head, marker_and_tail = out.split("… [", 1)
    count, tail = marker_and_tail.split(" characters cut] …", 1)
    assert text.startswith(head) and text.endswith(tail) and len(head) + len(tail) == limit
    assert int(count) == length - limit and abs(len(head) - len(tail)) <= 1
    assert cut_middle("short", 10) == "short" and cut_middle(text, None) == text
