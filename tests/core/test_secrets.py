"""SPEC §5.6 / §3 stage 10: the one secret scrubber, as properties and at its choke point.

The properties use an oracle that is deliberately naive (every 8-character window of the
whitespace-free text against every 8-character piece of the value and of its reverse), so the
automaton, the position map and the span merging are checked against the definition itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from jupyter_toolagent.core.event_scrub import scrub_event
from jupyter_toolagent.core.events import NoticeEvent, PermissionAskedEvent, TextDeltaEvent
from jupyter_toolagent.core.results import ToolOutputStore
from jupyter_toolagent.core.run_tool_use import run_tool_use
from jupyter_toolagent.core.secrets import (
    REDACTION,
    RUN_LENGTH,
    SecretScrubber,
    environment_scrubber,
    is_secret_name,
    protected_values,
)
from jupyter_toolagent.core.tool import Progress, Tool, ToolResult, ToolUseContext

from runtime_support import ctx_for, result_text

PROPERTIES = settings(max_examples=300, derandomize=True, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

SECRET_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_+/=.:"
FILLER_ALPHABET = "äöüßéèçñ;,!?()<>'\"&%#@§"  # disjoint from the secrets': filler must survive whole
WHITESPACE = st.sampled_from([" ", "\n", "\r\n", "\t", "  ", "\n\n "])

secrets_ = st.text(SECRET_ALPHABET, min_size=RUN_LENGTH, max_size=120)
fillers = st.text(FILLER_ALPHABET + " \n", max_size=40)


def compact(text: str) -> str:
    return "".join(text.split())


def runs_of(value: str, text: str) -> list[str]:
    """The naive oracle: every 8-window of the whitespace-free text that is a piece of the
    value or of its reverse."""
    value = compact(value)
    pieces = {t[i:i + RUN_LENGTH] for t in (value, value[::-1]) for i in range(len(t) - RUN_LENGTH + 1)}
    flat = compact(text)
    return [flat[i:i + RUN_LENGTH] for i in range(len(flat) - RUN_LENGTH + 1) if flat[i:i + RUN_LENGTH] in pieces]


@st.composite
def leaked_slice(draw: st.DrawFn, secret: str) -> str:
    """A run of ≥ 8 characters of ``secret``, maybe reversed, maybe with whitespace inside."""
    start = draw(st.integers(0, len(secret) - RUN_LENGTH))
    end = draw(st.integers(start + RUN_LENGTH, len(secret)))
    piece = secret[start:end]
    if draw(st.booleans()):
        piece = piece[::-1]
    cuts = sorted(draw(st.lists(st.integers(1, len(piece) - 1), max_size=4, unique=True)))
    out, last = [], 0
    for cut in cuts:
        out += [piece[last:cut], draw(WHITESPACE)]
        last = cut
    return "".join(out) + piece[last:]


@st.composite
def text_with_leaks(draw: st.DrawFn) -> tuple[list[str], str, list[str]]:
    values = draw(st.lists(secrets_, min_size=1, max_size=3))
    pieces: list[str] = []
    fill: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        f = draw(fillers)
        fill.append(f)
        pieces += [f, draw(leaked_slice(draw(st.sampled_from(values))))]
    last = draw(fillers)
    fill.append(last)
    return values, "".join(pieces + [last]), fill


@PROPERTIES
@given(text_with_leaks())
def test_no_run_of_a_protected_value_survives(case: tuple[list[str], str, list[str]]) -> None:
    values, text, fill = case
    assert any(runs_of(v, text) for v in values), "the generated text really leaks"
    out = SecretScrubber(values).scrub(text)
    for value in values:
        assert runs_of(value, out) == [], (value, text, out)
    assert REDACTION in out
    for piece in fill:  # what is not a secret is kept (the filler shares no character with them)
        for word in piece.split():
            assert word in out


@PROPERTIES
@given(st.lists(secrets_, min_size=1, max_size=3), st.text(SECRET_ALPHABET + FILLER_ALPHABET + " \n", max_size=300))
def test_text_without_a_run_is_returned_unchanged(values: list[str], text: str) -> None:
    assume(not any(runs_of(v, text) for v in values))
    assert SecretScrubber(values).scrub(text) is text


@PROPERTIES
@given(st.lists(secrets_, min_size=1, max_size=3), st.data())
def test_pieces_shorter_than_a_run_are_kept_and_scrubbing_is_idempotent(values: list[str], data: st.DataObject) -> None:
    secret = data.draw(st.sampled_from(values))
    start = data.draw(st.integers(0, len(secret) - RUN_LENGTH + 1))
    short = secret[start:start + RUN_LENGTH - 1]
    text = f"«{short}»"
    assume(not any(runs_of(v, text) for v in values))
    scrubber = SecretScrubber(values)
    assert scrubber.scrub(text) == text
    leaked = f"x {secret} y {secret[::-1]} z"
    once = scrubber.scrub(leaked)
    assert scrubber.scrub(once) == once


def test_a_key_split_over_lines_reversed_and_sliced() -> None:
    key = "sk-ant-api03-Zq9vW2xL7mN4pR8sT1uY6bC3dF5gH0jK"
    scrubber = SecretScrubber([key])
    text = (f"slice: {key[5:30]}\nreversed: {key[::-1]}\nfolded: {key[:20]}\n    {key[20:]}\n"
            f"near miss: {key[:7]}")
    out = scrubber.scrub(text)
    assert runs_of(key, out) == []
    assert out.count(REDACTION) == 3 and out.endswith(f"near miss: {key[:7]}")


def test_protected_names_and_the_values_left_alone(tmp_path: Any) -> None:
    for name in ("ANTHROPIC_API_KEY", "my_service_token", "Db_Password", "AWS_SECRET_ACCESS_KEY",
                 "GOOGLE_APPLICATION_CREDENTIALS", "api-key", "KeyVault"):
        assert is_secret_name(name)
    for name in ("PATH", "HOME", "ANTHROPIC_BASE_URL", "TOOLAGENT_MODEL", "LANG"):
        assert not is_secret_name(name)
    key_file = tmp_path / "key.json"
    key_file.write_text("{}")
    env = {
        "MY_SERVICE_TOKEN": "tok_live_8f2k9d0a", "SHORT_PASSWORD": "hunt3r!", "FLAG_TOKEN": "1",
        "PLAIN_SECRET": "dragon", "CREDENTIALS_FILE": str(key_file), "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    values = protected_values(env, extra=["sk-ant-explicit-key-000", None])
    assert values == ("hunt3r!", "sk-ant-explicit-key-000", "tok_live_8f2k9d0a")
    scrubber = environment_scrubber(env)
    assert scrubber.scrub("pw hunt3r! / !r3tnuh") == f"pw {REDACTION} / {REDACTION}"
    assert scrubber.scrub(f"dragon 1 {key_file}") == f"dragon 1 {key_file}"
    assert "tok_live" not in repr(scrubber) and environment_scrubber(env) is scrubber  # built once


def test_structured_content_is_scrubbed_except_binary_blocks() -> None:
    key = "sk-ant-api03-" + "Abc123" * 6
    scrubber = SecretScrubber([key])
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": key}}
    result = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": f"k={key[3:40]}"}, image]}
    cleaned = scrubber.scrub_result(result)
    assert cleaned["content"][0]["text"] == f"k={REDACTION}" and cleaned["content"][1] is image
    clean = {"type": "tool_result", "tool_use_id": "t", "content": "nothing here"}
    assert scrubber.scrub_result(clean) is clean
    nested = {"a": [key[::-1], ("x", key[10:30])], key[:12]: 1}
    assert scrubber.scrub_data(nested) == {"a": [REDACTION, ("x", REDACTION)], REDACTION: 1}


def test_emitted_events_are_scrubbed_but_the_model_stream_is_not_rescanned() -> None:
    key = "sk-ant-api03-" + "Xy9" * 12
    scrubber = SecretScrubber([key])
    notice = scrub_event(NoticeEvent(text=f"A hook said {key}"), scrubber)
    assert notice.text == f"A hook said {REDACTION}"
    asked = scrub_event(PermissionAskedEvent(tool_use_id="t", name="Bash", input={"command": f"echo {key[:20]}"},
                                             reason="r"), scrubber)
    assert asked.input == {"command": f"echo {REDACTION}"}
    delta = TextDeltaEvent(text="hi", snapshot="hi", block_index=0)
    assert scrub_event(delta, scrubber) is delta


# --- the choke point: every tool's result, error, progress and kept output -----------------------

KEY = "sk-ant-api03-fake-" + "Q7w" * 14
TOKEN = "svc_tok_" + "93kd" * 6


class NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mode: str


class Leaky(Tool):
    """A user-style tool that tries every way out: result, slice, reversal, a fold across lines,
    an exception, a progress line, print(), an oversized output kept in the session."""

    name = "Leaky"
    description = "leaks"
    input_model = NoInput

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, NoInput)
        progress(f"working on {KEY[4:30]}", output=f"tail {TOKEN[::-1]}")
        if input.mode == "raise":
            raise RuntimeError(f"failed with {KEY}")
        if input.mode == "print":
            print("printed", KEY[-20:])
            return "ok"
        if input.mode == "big":
            return "x" * 60_000 + KEY + "y" * 100
        if input.mode == "blocks":
            return ToolResult([{"type": "text", "text": f"{KEY[:15]}\n{KEY[15:40]}"}], is_error=True)
        return f"value {KEY[2:50]} and {TOKEN}"


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["plain", "raise", "print", "big", "blocks"])
async def test_run_tool_use_scrubs_every_way_out(mode: str) -> None:
    seen: list[Any] = []
    store = ToolOutputStore()
    ctx = ctx_for(Leaky(), emit=seen.append, outputs=store, scrubber=SecretScrubber([KEY, TOKEN]))
    outcome = await run_tool_use({"type": "tool_use", "id": "toolu_1", "name": "Leaky", "input": {"mode": mode}}, ctx)
    everything = [result_text(outcome.result), outcome.captured_output, store.get("toolu_1") or ""]
    everything += [f"{getattr(e, 'message', '')} {getattr(e, 'output', '')}" for e in seen]
    for text in everything:
        assert runs_of(KEY, text) == [] and runs_of(TOKEN, text) == [], text[-300:]
    if mode == "big":  # the preview ends before the key; the full text kept in the session is scrubbed
        assert REDACTION in (store.get("toolu_1") or "")
    else:
        assert REDACTION in result_text(outcome.result)


@pytest.mark.asyncio
async def test_an_unknown_tool_name_or_denial_quoting_a_key_is_scrubbed() -> None:
    async def deny(call, ctx, *, hook_decision):  # noqa: ANN001
        input = call.observable
        from jupyter_toolagent.core.permission_types import PermissionDecision
        return PermissionDecision.deny(f"no: {input['mode']}", "test")

    ctx = ctx_for(Leaky(), can_use_tool=deny, scrubber=SecretScrubber([KEY]))
    denied = await run_tool_use({"type": "tool_use", "id": "t1", "name": "Leaky", "input": {"mode": KEY}}, ctx)
    unknown = await run_tool_use({"type": "tool_use", "id": "t2", "name": KEY[::-1], "input": {}}, ctx)
    for outcome in (denied, unknown):
        assert outcome.is_error and runs_of(KEY, result_text(outcome.result)) == []


def test_scrubbing_is_shared_safely_between_threads() -> None:
    scrubber = SecretScrubber([KEY])
    text = ("line\n" * 2000) + KEY

    async def many() -> list[str]:
        return await asyncio.gather(*(asyncio.to_thread(scrubber.scrub, text) for _ in range(8)))

    assert all(out.endswith(REDACTION) for out in asyncio.run(many()))
