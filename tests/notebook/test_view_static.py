"""Static rendering (saved notebooks, terminals): content present, everything escaped."""

from __future__ import annotations

import html.parser

from jupyter_toolagent.core import events as E
from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.notebook import static_render as sr
from jupyter_toolagent.notebook.view_state import RunViewState, apply_event

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def run_state() -> RunViewState:
    s = RunViewState(started_at=0.0)
    for ev in [
        E.RequestStartedEvent(index=0, model="claude-sonnet-4-5"),
        E.TextDeltaEvent(text="x", snapshot=f"# Plan\n**Listing** files {EVIL}", block_index=0),
        E.ToolQueuedEvent(tool_use_id="toolu_A", name="Bash", input={"command": f"echo '{EVIL}'"}, at=1.0),
        E.PermissionAskedEvent(tool_use_id="toolu_A", name="Bash", input={}, reason="no allow rule matches", suggested_rule="Bash(echo:*)"),
        E.PermissionDecidedEvent(tool_use_id="toolu_A", name="Bash", behavior="allow", decided_by="user", rule_added="Bash(echo:*)"),
        E.ToolStartedEvent(tool_use_id="toolu_A", name="Bash", at=1.5),
        E.ToolFinishedEvent(tool_use_id="toolu_A", name="Bash", status="done", result={"type": "tool_result", "tool_use_id": "toolu_A", "content": EVIL}, duration=0.25, captured_output="printed <b>"),
        E.ToolQueuedEvent(tool_use_id="toolu_B", name="Write", input={"path": "/tmp/a.txt", "content": "line\n" * 500}, at=2.0),
        E.PermissionDecidedEvent(tool_use_id="toolu_B", name="Write", behavior="deny", decided_by="user", message="not <that> file"),
        E.ToolFinishedEvent(tool_use_id="toolu_B", name="Write", status="denied", result={"type": "tool_result", "tool_use_id": "toolu_B", "content": "denied: not <that> file", "is_error": True}),
        E.NoticeEvent(level="warning", text=f"hook says {EVIL}"),
        E.RequestFinishedEvent(index=0, stop_reason="end_turn", usage=Usage(1200, 340, 50, 900, 1), request_id="req_123"),
        E.RunFinishedEvent(reason="end_turn", usage=Usage(1200, 340, 50, 900, 1)),
    ]:
        apply_event(s, ev)
    return s


class _Collect(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)


def test_html_contains_tools_status_text_and_usage():
    out = sr.render_html(run_state())
    for needle in ["Bash", "Write", "done", "denied", "<h1>Plan</h1>", "<strong>Listing</strong>", "Agent finished",
                   "input 1,200", "output 340", "cache write 50", "cache read 900", "Bash(echo:*)", "not &lt;that&gt; file"]:
        assert needle in out, needle
    assert 'data-status="done"' in out and 'data-status="denied"' in out


def test_html_escapes_everything_from_the_model_and_tools():
    out = sr.render_html(run_state())
    parser = _Collect()
    parser.feed(out)
    assert "script" not in parser.tags
    assert "img" not in parser.tags  # the only images would be result images, and there are none
    assert not any(name.startswith("on") for name, _ in parser.attrs)
    assert "&lt;script&gt;" in out


def test_markdown_neutralises_javascript_links():
    out = sr.markdown_html("[click](javascript:alert(1))")
    assert "javascript:" not in out


def test_long_input_values_fold_but_commands_and_paths_do_not():
    long_cmd = "echo " + "a" * 2000
    out = sr.input_html({"command": long_cmd, "path": "/p/" + "d/" * 400, "content": "x\n" * 100})
    assert out.count("<details>") == 1
    assert long_cmd in out  # a command is shown in full, unfolded
    assert "100 lines" in out


def test_decision_shows_who_and_when_with_timestamp_attribute():
    s = run_state()
    out = sr.card_html(s.cards["toolu_A"], wall_offset=1_700_000_000.0)
    assert "Always allowed by you at" in out and "session rule added: Bash(echo:*)" in out
    expected = s.cards["toolu_A"].decision.at + 1_700_000_000.0
    assert 'data-decided-by="user"' in out and f'data-decided-at="{expected:.3f}"' in out


def test_result_images_are_rendered_only_when_safe():
    s = RunViewState(started_at=0)
    apply_event(s, E.ToolQueuedEvent(tool_use_id="t", name="RunPython", input={"code": "plot()"}))
    content = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": 'x" onerror="alert(1)'}},
        {"type": "image", "source": {"type": "base64", "media_type": "text/html", "data": "PGI+"}},
    ]
    apply_event(s, E.ToolFinishedEvent(tool_use_id="t", name="RunPython", status="done", result={"content": content}))
    out = sr.card_html(s.cards["t"])
    assert out.count("<img") == 1 and "data:image/png;base64,iVBORw0KGgo=" in out
    assert "onerror" not in out


def test_plain_text_form():
    text = sr.render_text(run_state())
    assert text.startswith("Agent finished")
    assert "[Bash] done (250 ms)" in text
    assert "[Write] denied" in text
    assert "Denied by you" in text and "not <that> file" in text
    assert "printed:" in text and "# Plan" in text
    assert "input 1,200" in text


def test_mimebundle_has_plain_and_html():
    bundle = sr.StaticRunView(run_state())._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/html"].startswith("<style>")


def test_theme_uses_jupyterlab_css_variables_with_fallbacks():
    for var in ["--jp-ui-font-color1", "--jp-border-color2", "--jp-success-color1", "--jp-error-color1", "--jp-layout-color2"]:
        assert f"var({var}," in sr.STYLE


def test_error_run_shows_error_and_request_id():
    s = RunViewState(started_at=0)
    apply_event(s, E.RequestFinishedEvent(index=0, stop_reason=None, usage=Usage(), request_id="req_9"))
    apply_event(s, E.RunFinishedEvent(reason="api_error", usage=Usage(), error="HTTP 500 <api_error>"))
    out = sr.render_html(s)
    assert "Agent failed" in out and "HTTP 500 &lt;api_error&gt;" in out and "req_9" in out
    assert "Error: HTTP 500 <api_error>" in sr.render_text(s)


def test_interrupted_and_timed_out_asks_say_so():
    from jupyter_toolagent.notebook.view_state import Decision

    assert sr.decision_text(Decision("deny", "interrupt", at=0.0)).startswith("Not answered: the run was stopped")
    assert "no answer in time" in sr.decision_text(Decision("deny", "timeout", at=0.0))


def test_footer_is_empty_until_something_was_counted():
    s = RunViewState(started_at=0)
    assert sr.footer_html(s) == ""
    apply_event(s, E.RequestFinishedEvent(index=0, stop_reason="end_turn", usage=Usage(5, 6, 0, 0, 1)))
    assert "input 5" in sr.footer_html(s)


def test_cost_is_shown_for_a_priced_model_and_omitted_otherwise(monkeypatch):
    """The footer asks `models.pricing.estimate_cost` (a `Cost` with ``total_usd``, or None)."""
    import sys
    import types
    from decimal import Decimal

    calls = []

    def estimate_cost(model, usage):
        calls.append((model, usage))
        if model == "broken-model":
            raise RuntimeError("price table unreadable")
        return types.SimpleNamespace(total_usd=Decimal("0.0123")) if model == "claude-sonnet-4-5" else None

    fake = types.ModuleType("jupyter_toolagent.models.pricing")
    fake.estimate_cost = estimate_cost
    monkeypatch.setitem(sys.modules, "jupyter_toolagent.models.pricing", fake)
    s = run_state()
    assert "≈ $0.0123" in sr.usage_text(s)
    assert calls[-1] == ("claude-sonnet-4-5", s.usage)
    for model in ("no-such-model", "broken-model"):
        s.model = model
        assert "$" not in sr.usage_text(s)
