"""The sandbox, the working directory and the settings files through a real kernel (nbclient, the
fake server over the real SDK): ``%agent sandbox`` and ``%agent config`` say whether the sandbox
works; ``%cd`` moves the permission working directory; a widening project settings file is
announced once; a parent's settings file is never read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kernel_harness import cell_errors, cell_text, kernel_env, run_notebook

from jupyter_toolagent.testing import FakeAnthropicServer
from jupyter_toolagent.models import tool_use_block

LOAD = "%load_ext jupyter_toolagent"


def test_agent_sandbox_and_config_show_the_sandbox(tmp_path: Path) -> None:
    nb = run_notebook([LOAD, "%agent sandbox", "%agent config"], sys.executable, kernel_env(None), tmp_path)
    assert not any(cell_errors(c) for c in nb.cells), [cell_text(c) for c in nb.cells]
    shown = cell_text(nb.cells[1])
    assert "sandbox: bubblewrap works here" in shown
    assert f"working directory: {tmp_path.resolve()}" in shown
    assert "sandbox: read-only, no network" in shown and f"sandbox: writes to {tmp_path.resolve()}" in shown
    assert "sandbox: bubblewrap (works here)" in cell_text(nb.cells[2])


def test_where_the_sandbox_is_off_the_notebook_says_so_and_cards_say_not_sandboxed(tmp_path: Path) -> None:
    turns = [[tool_use_block("Bash", {"command": "ls"}, id="toolu_ls")], "done",
             [tool_use_block("Bash", {"command": "ls"}, id="toolu_ls2")], "done"]
    with FakeAnthropicServer(turns=turns) as server:
        nb = run_notebook([
            LOAD,
            "%agent sandbox",
            "%agent config",
            "%%agent\nlist the files",
            "%%agent --allow 'Bash(ls)'\nlist the files",
        ], sys.executable, kernel_env(server.base_url, TOOLAGENT_SANDBOX="off"), tmp_path)
    texts = [cell_text(c) for c in nb.cells]
    assert "sandbox: unavailable — turned off by TOOLAGENT_SANDBOX=off" in texts[1]
    assert "no Bash command is auto-allowed" in texts[1]
    assert "sandbox: unavailable" in texts[2] and "not sandboxed" in texts[2]
    assert "no sandbox works on this machine" in texts[3]  # `ls` was asked about, and nobody can answer here
    assert "[not sandboxed]" in texts[4]  # allowed by the rule, it ran — and its card says how


def test_cd_moves_the_permission_working_directory(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    turns = [
        [tool_use_block("Write", {"file_path": "first.txt", "content": "1"}, id="toolu_first")], "ok",
        [tool_use_block("Write", {"file_path": "note.txt", "content": "hi"}, id="toolu_inside"),
         tool_use_block("Write", {"file_path": "../outside.txt", "content": "no"}, id="toolu_outside"),
         tool_use_block("Bash", {"command": "pwd"}, id="toolu_pwd")], "ok",
    ]
    with FakeAnthropicServer(turns=turns) as server:
        nb = run_notebook([
            LOAD,
            "%%agent --mode acceptEdits\nwrite first",
            "%cd sub",
            "%%agent --mode acceptEdits\nwrite here and outside",
            "from jupyter_toolagent import current_session\n"
            "perms = current_session().permissions\n"
            "print('CWD', perms.cwd)\n"
            "print('DECISIONS', sorted((d.tool_use_id, d.behavior) for d in perms.decisions))",
        ], sys.executable, kernel_env(server.base_url), tmp_path)
    texts = [cell_text(c) for c in nb.cells]
    assert f"CWD {(tmp_path / 'sub').resolve()}" in texts[4], texts
    assert ("'toolu_inside', 'allow'" in texts[4] and "'toolu_outside', 'deny'" in texts[4]
            and "'toolu_first', 'allow'" in texts[4])
    assert (tmp_path / "first.txt").read_text() == "1" and (tmp_path / "sub" / "note.txt").read_text() == "hi"
    assert not (tmp_path / "outside.txt").exists()
    assert str((tmp_path / "sub").resolve()) in texts[3]  # Bash ran in the new directory too


def test_a_widening_project_settings_file_is_announced_once_and_a_parents_is_ignored(tmp_path: Path) -> None:
    parent = tmp_path / ".toolagent"
    parent.mkdir()
    (parent / "settings.json").write_text(json.dumps({"mode": "bypassPermissions"}))
    project = tmp_path / "project"
    (project / ".toolagent").mkdir(parents=True)
    (project / ".toolagent" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(touch:*)"]}}))
    turns = ["hello", "again", [tool_use_block("Bash", {"command": "rm -f nothing"}, id="toolu_rm")], "no"]
    with FakeAnthropicServer(turns=turns) as server:
        nb = run_notebook([LOAD, "%%agent\nhi", "%%agent\nagain", "%%agent\nremove", "%agent config"],
                          sys.executable, kernel_env(server.base_url), project)
    texts = [cell_text(c) for c in nb.cells]
    assert "widens permissions: allow rules Bash(touch:*)" in texts[1]
    assert "widens permissions" not in texts[2] + texts[3]
    assert "not run" in texts[3]  # the parent's bypassPermissions was never read: rm was asked, and denied
    assert "sandbox: bubblewrap (works here)" in texts[4]
