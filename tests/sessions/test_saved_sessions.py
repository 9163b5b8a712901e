"""Saved sessions (SPEC §14): append-only JSONL, crash-safe, scrubbed, resumable.

Through the real path where it matters (`AnthropicModel` → `FakeAnthropicServer`, a
`JsonlSessionStore` attached as the magic attaches it); the file format's failure cases are
written byte by byte.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from jupyter_toolagent.core.compaction import Compaction
from jupyter_toolagent.core.pairing import check_pairing, normalize_messages_for_api
from jupyter_toolagent.core.session import RunConfig, Session
from jupyter_toolagent.core.simple_policy import SimplePolicy
from jupyter_toolagent.core.tool import Progress, Tool, ToolUseContext
from jupyter_toolagent.errors import SessionFileError
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.sessions import JsonlSessionStore, list_saved, load_saved, resume_session, sessions_dir
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block


class EchoInput(BaseModel):
    text: str


class Echo(Tool):
    name = "Echo"
    description = "Echo text back, and the environment's API key with it (a leaky tool)."
    input_model = EchoInput

    def is_concurrency_safe(self, input: BaseModel) -> bool:
        return True

    def is_read_only(self, input: BaseModel) -> bool:
        return True

    async def call(self, input: BaseModel, ctx: ToolUseContext, progress: Progress) -> Any:
        assert isinstance(input, EchoInput)
        return f"{input.text} / key={os.environ.get('ANTHROPIC_API_KEY')}"


def saved_session(tmp_path: Path, name: str = "default") -> Session:
    session = Session(name, cwd=tmp_path)
    session.store = JsonlSessionStore(sessions_dir(tmp_path), name)
    return session


async def run_cells(session: Session, server: FakeAnthropicServer, prompts: list[str]) -> list[Any]:
    model = AnthropicModel("claude-sonnet-5-5", api_key=os.environ.get("ANTHROPIC_API_KEY") or "test-key",
                           base_url=server.base_url, max_retries=0)
    config = RunConfig(model=model, tool_provider=lambda: [Echo()], can_use_tool=SimplePolicy(), max_turns=10)
    finished = []
    try:
        for prompt in prompts:
            events = [e async for e in session.run(prompt, config)]
            finished.append(events[-1])
    finally:
        await model.aclose()
    return finished


def echo_turns(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    if any(b.get("type") == "tool_result" for b in last):
        return "Echoed."
    return [tool_use_block("Echo", {"text": last[-1]["text"][:40]})]


# --- the real path ---------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_saved_session_is_written_as_it_runs_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "Qw7" * 12
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    with FakeAnthropicServer(turns=echo_turns) as server:
        session = saved_session(tmp_path)
        finished = await run_cells(session, server, [f"first, my key is {key}", "second"])
        assert [f.reason for f in finished] == ["end_turn", "end_turn"]
        path = sessions_dir(tmp_path) / "default.jsonl"
        data = path.read_text()
        assert key not in data and key[::-1] not in data, "the key is in no saved byte"
        records = [json.loads(line) for line in data.splitlines()]
        assert records[0]["type"] == "session" and [r["type"] for r in records].count("run") == 2
        assert [r["n"] for r in records if r["type"] == "message"] == list(range(len(session.messages)))

        resumed, report = resume_session("default", cwd=tmp_path)
        assert report.repair is None and not report.torn_tail and not report.kernel_restarted
        assert len(resumed.messages) == len(session.messages) and len(resumed.runs) == 2
        assert check_pairing(normalize_messages_for_api(resumed.messages)) == []
        await run_cells(resumed, server, ["third"])
        assert "Echo" in json.dumps(server.bodies[-1]["messages"]) and "second" in json.dumps(server.bodies[-1])
    again = load_saved(path)
    assert len(again.messages) == len(resumed.messages) and len(again.runs) == 3
    assert key not in path.read_text()


@pytest.mark.asyncio
async def test_a_fresh_session_never_appends_to_an_older_file(tmp_path: Path) -> None:
    with FakeAnthropicServer(turns=echo_turns) as server:
        first = saved_session(tmp_path)
        await run_cells(first, server, ["alpha"])
        fresh = saved_session(tmp_path)
        await run_cells(fresh, server, ["bravo"])
    assert fresh.store.saved_name == "default-2"
    names = sorted(s.path.stem for s in list_saved(tmp_path)[0])
    assert names == ["default", "default-2"]
    assert "alpha" in json.dumps(load_saved(sessions_dir(tmp_path) / "default.jsonl").messages)
    assert "alpha" not in json.dumps(load_saved(sessions_dir(tmp_path) / "default-2.jsonl").messages)


@pytest.mark.asyncio
async def test_compactions_and_the_learned_window_come_back(tmp_path: Path) -> None:
    with FakeAnthropicServer(turns=echo_turns) as server:
        session = saved_session(tmp_path)
        await run_cells(session, server, ["one", "two", "three"])
    session.context.meter.learned_window = 12_345
    compaction = Compaction(boundary=3, summary="they echoed", cleared=frozenset({"toolu_x"}), kept_turns=2,
                            reason="manual", tokens_before=900, tokens_after=300)
    session.context.compactions.append(compaction)
    session.store_compaction(compaction)
    session.save()
    resumed, _ = resume_session("default", cwd=tmp_path)
    assert resumed.context.meter.learned_window == 12_345
    (back,) = resumed.context.compactions
    assert (back.boundary, back.summary, back.cleared, back.reason) == (3, "they echoed", frozenset({"toolu_x"}), "manual")


# --- crash safety and bad files ---------------------------------------------------------------


def write_session(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    session = saved_session(tmp_path)
    session.messages.extend(messages)
    session.save()
    assert session.store.path is not None
    return session.store.path


def prompt(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=1, max_value=200))
def test_a_write_cut_anywhere_leaves_a_loadable_file(tmp_path_factory: pytest.TempPathFactory, cut: int) -> None:
    """A kill mid-write: the last record is cut after ``cut`` bytes (any position)."""
    tmp_path = tmp_path_factory.mktemp("torn")
    path = write_session(tmp_path, [prompt("hello"), {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}])
    record = json.dumps({"type": "message", "n": 2, "message": prompt("x" * 300)}) + "\n"
    with open(path, "ab") as handle:
        handle.write(record.encode()[: min(cut, len(record) - 1)])
    saved = load_saved(path)
    assert saved.torn_tail and len(saved.messages) == 2
    resumed, report = resume_session("default", cwd=tmp_path)
    assert report.torn_tail and "cut by a crash" in report.summary()
    resumed.messages.append(prompt("after the crash"))
    resumed.save()
    again = load_saved(path)
    assert not again.torn_tail, "the torn line was trimmed before appending"
    assert again.messages[-1] == prompt("after the crash") and len(again.messages) == 3


@pytest.mark.parametrize("content, expected", [
    (b'{"type": "session", "format": "jupyter_toolagent.session", "version": 1}\nnot json\n{"type": "run"}\n',
     "line 2 is not a JSON record"),
    (b'{"cells": [], "nbformat": 4}\n', "no jupyter_toolagent.session header line"),
    (b'', "no jupyter_toolagent.session header line"),
    (b'{"type": "session", "format": "jupyter_toolagent.session", "version": 99}\n', "newer jupyter_toolagent"),
    (b'{"type": "session", "format": "jupyter_toolagent.session", "version": 1}\n{"type": "message", "n": 5, "message": {}}\n',
     "damaged: line 2"),
])
def test_a_corrupt_or_foreign_file_is_one_clear_line(tmp_path: Path, content: bytes, expected: str) -> None:
    directory = sessions_dir(tmp_path)
    directory.mkdir(parents=True)
    (directory / "default.jsonl").write_bytes(content)
    with pytest.raises(SessionFileError) as caught:
        resume_session("default", cwd=tmp_path)
    assert expected in str(caught.value) and "\n" not in str(caught.value)
    saved, problems = list_saved(tmp_path)
    assert saved == [] and len(problems) == 1


def test_an_invalid_saved_transcript_is_repaired_with_a_report(tmp_path: Path) -> None:
    broken = [prompt("go"), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_lost", "name": "Echo", "input": {"text": "a"}}]}, prompt("next")]
    write_session(tmp_path, broken)
    resumed, report = resume_session("default", cwd=tmp_path)
    assert report.repair is not None and "toolu_lost" in report.repair
    assert "repaired" in report.summary()
    assert check_pairing(normalize_messages_for_api(resumed.messages)) == []
    resumed.save()  # the repaired transcript is what the file holds from now on
    assert check_pairing(normalize_messages_for_api(load_saved(resumed.store.path).messages)) == []


def test_no_saved_session_is_one_clear_line(tmp_path: Path) -> None:
    with pytest.raises(SessionFileError, match="no saved session 'nope'"):
        resume_session("nope", cwd=tmp_path)


def test_reset_starts_the_saved_conversation_over(tmp_path: Path) -> None:
    path = write_session(tmp_path, [prompt("old")])
    session, _ = resume_session("default", cwd=tmp_path)
    session.reset()
    session.messages.append(prompt("new"))
    session.save()
    assert load_saved(path).messages == [prompt("new")]


# --- the key, a generated family --------------------------------------------------------------

key_chars = st.text(alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters="-_"),
                    min_size=16, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(secret=key_chars, where=st.sampled_from(["prompt", "result", "input", "error"]), wrap=st.sampled_from(
    ["{}", "key={}", "Bearer {}", "'{}'", "\"{}\"", "{}\n"]))
def test_the_api_key_is_never_in_a_saved_file(tmp_path_factory: pytest.TempPathFactory, secret: str, where: str,
                                              wrap: str) -> None:
    tmp_path = tmp_path_factory.mktemp("key")
    value = "sk-ant-api03-" + secret
    text = wrap.format(value)
    old = os.environ.get("ANTHROPIC_API_KEY")
    os.environ["ANTHROPIC_API_KEY"] = value
    try:
        tool_use = {"type": "tool_use", "id": "toolu_1", "name": "Echo", "input": {"text": text if where == "input" else "a"}}
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": text if where == "result" else "ok",
                  **({"is_error": True} if where == "error" else {})}
        if where == "error":
            result["content"] = [{"type": "text", "text": f"Error: {text}"}]
        path = write_session(tmp_path, [prompt(text if where == "prompt" else "go"),
                                        {"role": "assistant", "content": [tool_use]},
                                        {"role": "user", "content": [result]}])
        data = path.read_bytes()
        assert value.encode() not in data and json.dumps(value).encode()[1:-1] not in data
        assert load_saved(path).messages[1]["content"][0]["id"] == "toolu_1", "everything else is kept"
    finally:
        if old is None:
            os.environ.pop("ANTHROPIC_API_KEY", None)
        else:
            os.environ["ANTHROPIC_API_KEY"] = old


def test_everyday_text_is_saved_unchanged(tmp_path: Path) -> None:
    everyday = ["df.describe() shows 3 columns", "token count 12345678", "see https://example.org/a-b_c",
                "SECRET_SAUCE = 'ketchup'"]
    path = write_session(tmp_path, [prompt(t) for t in everyday])
    assert [m["content"][0]["text"] for m in load_saved(path).messages] == everyday


def test_saving_runs_with_the_loop(tmp_path: Path) -> None:
    """No file before there is anything to save; a failing disk becomes one notice, not a crash."""
    session = saved_session(tmp_path)
    assert not sessions_dir(tmp_path).exists()

    class Broken:
        def sync(self, session: Any) -> None:
            raise OSError(28, "No space left on device")

    session.store = Broken()
    with FakeAnthropicServer(turns=echo_turns) as server:
        finished = asyncio.run(run_cells(session, server, ["one", "two"]))
    assert [f.reason for f in finished] == ["end_turn", "end_turn"]
    notices = [e.text for r in session.runs for e in r.events if e.kind == "notice"]
    assert sum("could not be saved" in t for t in notices) == 1
