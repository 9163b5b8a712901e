"""Read before edit (SPEC §10): Edit and Write change an existing file only after this session
Read it, and only while it is unchanged since; a new file needs no Read; the session's own
successful Edit/Write counts as having seen the result. Through the tool pipeline, and through
`Agent` + the real SDK + the fake server (where the state lives in the session, across
requests)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tool_support import call, text_of

from jupyter_toolagent import Agent, check_pairing
from jupyter_toolagent.core.file_state import HASH_LIMIT, FileReadState, FileStamp
from jupyter_toolagent.core.session import Session
from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block
from jupyter_toolagent.testing.validation import request_error

KEY = "sk-ant-api03-" + "Rb8" * 10


# --- the rule, call by call -------------------------------------------------------------------

@pytest.mark.asyncio
async def test_edit_of_an_unread_file_is_refused_naming_read(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    outcome = await call(ctx_in(), "Edit", file_path="a.txt", old_string="one", new_string="two")
    assert outcome.is_error and outcome.status == "invalid"
    assert "has not been read" in text_of(outcome) and "Read it first" in text_of(outcome)
    assert (tmp_path / "a.txt").read_text() == "one\n"


@pytest.mark.asyncio
async def test_read_then_edit_runs_and_a_second_edit_needs_no_new_read(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    ctx = ctx_in()
    assert not (await call(ctx, "Read", file_path="a.txt")).is_error
    first = await call(ctx, "Edit", file_path="a.txt", old_string="one", new_string="1")
    second = await call(ctx, "Edit", file_path="./a.txt", old_string="two", new_string="2")
    assert not first.is_error and not second.is_error, (text_of(first), text_of(second))
    assert (tmp_path / "a.txt").read_text() == "1\n2\n"


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_since_the_read_is_refused_until_read_again(tmp_path: Path, ctx_in: Any) -> None:
    target = tmp_path / "a.txt"
    target.write_text("one\n")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="a.txt")
    target.write_text("one, edited next door\n")
    outcome = await call(ctx, "Edit", file_path="a.txt", old_string="one", new_string="two")
    assert outcome.is_error and "changed since it was last read" in text_of(outcome) and "Read it again" in text_of(outcome)
    assert target.read_text() == "one, edited next door\n"
    overwrite = await call(ctx, "Write", file_path="a.txt", content="replaced\n")
    assert overwrite.is_error and "changed since" in text_of(overwrite)
    await call(ctx, "Read", file_path="a.txt")
    assert not (await call(ctx, "Edit", file_path="a.txt", old_string="one", new_string="two")).is_error
    assert target.read_text() == "two, edited next door\n"


@pytest.mark.asyncio
async def test_write_of_a_new_file_needs_no_read_but_overwriting_an_unread_one_does(tmp_path: Path, ctx_in: Any) -> None:
    ctx = ctx_in()
    created = await call(ctx, "Write", file_path="new/file.txt", content="hello\n")
    assert not created.is_error and (tmp_path / "new" / "file.txt").read_text() == "hello\n"
    again = await call(ctx, "Write", file_path="new/file.txt", content="hello again\n")  # its own write: seen
    assert not again.is_error and text_of(again).startswith("Overwrote")
    edit = await call(ctx, "Edit", file_path="new/file.txt", old_string="again", new_string="twice")
    assert not edit.is_error
    (tmp_path / "theirs.txt").write_text("keep me\n")
    refused = await call(ctx, "Write", file_path="theirs.txt", content="lost\n")
    assert refused.is_error and "has not been read" in text_of(refused) and "Read" in text_of(refused)
    assert (tmp_path / "theirs.txt").read_text() == "keep me\n"


@pytest.mark.asyncio
async def test_a_partial_read_counts_as_a_read(tmp_path: Path, ctx_in: Any) -> None:
    """As in Claude Code: Edit's old_string must still match the file exactly and once."""
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    ctx = ctx_in()
    await call(ctx, "Read", file_path="long.txt", offset=1, limit=2)
    outcome = await call(ctx, "Edit", file_path="long.txt", old_string="line 50\n", new_string="line fifty\n")
    assert not outcome.is_error, text_of(outcome)


@pytest.mark.asyncio
async def test_a_failed_read_records_nothing(tmp_path: Path, ctx_in: Any) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary")
    ctx = ctx_in()
    assert (await call(ctx, "Read", file_path="blob.bin")).is_error
    assert (await call(ctx, "Read", file_path="missing.txt")).is_error
    assert len(ctx.file_reads) == 0


@pytest.mark.asyncio
async def test_the_file_is_checked_again_when_the_call_runs(tmp_path: Path, ctx_in: Any) -> None:
    """The change can come while the approval is pending: after validation, before the call."""
    target = tmp_path / "a.txt"
    target.write_text("one\n")
    ctx = ctx_in()
    await call(ctx, "Read", file_path="a.txt")

    async def change_then_allow(call: Any, c: Any, *, hook_decision: Any) -> Any:
        from jupyter_toolagent.core.permission_types import PermissionDecision

        target.write_text("one, changed during the approval\n")
        return PermissionDecision.allow("test")

    outcome = await call(ctx.replace(can_use_tool=change_then_allow), "Edit", file_path="a.txt", old_string="one",
                         new_string="two")
    assert outcome.is_error and "changed since" in text_of(outcome)
    assert target.read_text() == "one, changed during the approval\n"


# --- content identity, not mtime ------------------------------------------------------------------

def test_a_same_size_change_with_the_old_mtime_is_a_change(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("alpha\n")
    before = FileStamp.of_path(target)
    info = os.stat(target)
    target.write_text("omega\n")
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))  # what `cp -p` or `touch -r` leave
    after = FileStamp.of_path(target)
    assert before is not None and after is not None
    assert (before.mtime_ns, before.size) == (after.mtime_ns, after.size)
    assert not before.same_content(after)


def test_a_touch_without_change_is_not_a_change(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("alpha\n")
    before = FileStamp.of_path(target)
    os.utime(target, ns=(1, 10**18))
    after = FileStamp.of_path(target)
    assert before is not None and after is not None and before.mtime_ns != after.mtime_ns
    assert before.same_content(after)


def test_files_past_the_hash_limit_compare_by_mtime_and_size(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        f.truncate(HASH_LIMIT + 1)
    stamp = FileStamp.of_path(big)
    assert stamp is not None and stamp.digest is None
    os.utime(big, ns=(1, 10**18))
    later = FileStamp.of_path(big)
    assert later is not None and not stamp.same_content(later)


def test_the_state_is_keyed_by_the_resolved_path(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("x\n")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    state = FileReadState()
    state.record(tmp_path / "sub" / ".." / "link.txt", FileStamp.of_path(tmp_path / "real.txt"))
    assert state.last_seen(tmp_path / "real.txt") is not None


def test_a_session_reset_forgets_what_was_read(tmp_path: Path) -> None:
    session = Session(cwd=tmp_path)
    (tmp_path / "a.txt").write_text("x\n")
    session.file_reads.record(tmp_path / "a.txt", FileStamp.of_path(tmp_path / "a.txt"))
    session.reset()
    assert session.file_reads.last_seen(tmp_path / "a.txt") is None


# --- through Agent + the real SDK + the fake server ---------------------------------------------------

def results_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


@pytest.mark.asyncio
async def test_the_rule_across_the_requests_of_a_run(tmp_path: Path, no_real_api: None) -> None:
    target = tmp_path / "app.py"
    target.write_text("x = 1\ny = 2\n")

    def turns(body: dict[str, Any]) -> Any:
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if step == 0:
            return [tool_use_block("Edit", {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 10"})]
        if step == 1:
            return [tool_use_block("Read", {"file_path": "app.py"})]
        if step == 2:
            return [tool_use_block("Edit", {"file_path": "app.py", "old_string": "x = 1", "new_string": "x = 10"})]
        if step == 3:
            return [tool_use_block("Edit", {"file_path": "app.py", "old_string": "y = 2", "new_string": "y = 20"})]
        if step == 4:
            target.write_text(target.read_text() + "z = 3\n")  # the person edits it in the next tab
            return [tool_use_block("Edit", {"file_path": "app.py", "old_string": "y = 20", "new_string": "y = 0"}),
                    tool_use_block("Write", {"file_path": "notes.md", "content": "# notes\n"})]
        return "Done."

    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY)
        agent = Agent(model, builtin_tools=True, cwd=tmp_path, allow=["Edit", "Write"])
        record = await agent.run("Change app.py")
        bodies = server.bodies
    assert record.finish_reason == "end_turn", record.error
    assert check_pairing(agent.messages) == [] and all(request_error(b) is None for b in bodies)
    blind, read, edit, second = (results_of(bodies[i])[0] for i in range(1, 5))
    assert blind["is_error"] is True and "Read it first" in result_text(blind)
    assert read.get("is_error") is not True
    assert edit.get("is_error") is not True and "x = 10" in result_text(edit)
    assert second.get("is_error") is not True  # its own Edit counts as seen
    stale, new_file = results_of(bodies[5])
    assert stale["is_error"] is True and "changed since it was last read" in result_text(stale)
    assert new_file.get("is_error") is not True and (tmp_path / "notes.md").read_text() == "# notes\n"
    assert target.read_text() == "x = 10\ny = 20\nz = 3\n"


@pytest.mark.asyncio
async def test_a_read_in_one_run_lets_the_next_run_edit(tmp_path: Path, no_real_api: None) -> None:
    """Runs of one session (``%%agent`` cells of one conversation) share what was read."""
    (tmp_path / "a.txt").write_text("old\n")
    turns = [[tool_use_block("Read", {"file_path": "a.txt"})], "Read it.",
             [tool_use_block("Edit", {"file_path": "a.txt", "old_string": "old", "new_string": "new"})], "Edited."]
    with FakeAnthropicServer(turns=turns) as server:
        model = AnthropicModel("claude-sonnet-5-5", base_url=server.base_url, api_key=KEY)
        agent = Agent(model, builtin_tools=True, cwd=tmp_path, allow=["Edit"])
        await agent.run("Read a.txt")
        record = await agent.run("Now change it")
        bodies = server.bodies
    assert record.finish_reason == "end_turn", record.error
    edit = results_of(bodies[3])[0]
    assert edit.get("is_error") is not True, result_text(edit)
    assert (tmp_path / "a.txt").read_text() == "new\n"
