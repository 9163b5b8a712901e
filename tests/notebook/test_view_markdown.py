"""Streaming Markdown: escaped, re-rendered incrementally, exact once complete."""

from __future__ import annotations

import pytest

from jupyter_toolagent.notebook.markdown_text import MarkdownStream, markdown_html, stable_end

REPLY = (
    "# Findings\n\nThe frame has **3 columns** and `1,000` rows.\n\n"
    "```python\ndf.describe()\n\n# a blank line inside the fence\nprint(df)\n```\n\n"
    "- first point\n\n- second point, loose list\n\n"
    "Then a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nDone <b>really</b>.\n"
)


def test_raw_html_is_escaped():
    out = markdown_html("hi <script>alert(1)</script> <b>x</b>")
    assert "<script>" not in out and "&lt;script&gt;" in out and "<b>" not in out


def test_stable_end_never_splits_inside_a_fence_or_a_list():
    text = "para\n\n```\ncode\n\nmore\n```\n\nafter\n\n- a\n\n- b\n\nend\nx"
    cut = stable_end(text)
    assert text[:cut].endswith("- b\n\n") and text[cut:] == "end\nx"
    fence_open = text.index("```")
    fence_close = text.index("```", fence_open + 3)
    for n in range(len(text)):
        k = stable_end(text[:n])
        assert k == 0 or k <= fence_open or k > fence_close  # never inside the fence
        assert k == 0 or text[:k].endswith("\n\n")  # always at a block boundary


@pytest.mark.parametrize("step", [1, 7, 50])
def test_streaming_renders_are_escaped_and_the_final_one_is_exact(step):
    stream = MarkdownStream()
    for n in range(0, len(REPLY) + 1, step):
        assert "<script" not in stream.render(REPLY[:n])
    assert stream.render(REPLY, final=True) == markdown_html(REPLY)
    live = MarkdownStream().render(REPLY)
    for needle in ["<h1>Findings</h1>", "<strong>3 columns</strong>", "# a blank line inside the fence", "<table>", "&lt;b&gt;really"]:
        assert needle in live


def test_work_grows_linearly_with_the_text():
    paragraph = "Some words that stream in, with **emphasis** and `code`.\n\n"
    text = paragraph * 400  # 23 KB
    stream = MarkdownStream()
    for n in range(0, len(text), 100):  # ~230 refreshes
        stream.render(text[:n])
    full_each_time = sum(range(0, len(text), 100))
    assert stream.rendered_chars < 4 * len(text)
    assert stream.rendered_chars < full_each_time / 20


def test_a_text_that_is_not_an_extension_starts_over():
    stream = MarkdownStream()
    stream.render("first paragraph\n\nsecond\n\nthird")
    out = stream.render("other text\n\nentirely\n\nx")
    assert "other" in out and "first" not in out
