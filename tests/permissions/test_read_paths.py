"""SPEC §5.3 steps 6 and 9 for the reading tools (the real Read, Glob and Grep, the real engine):
auto-allowed only inside the working directory; ``/proc``, ``/sys``, ``/dev`` and secret-looking
files always ask, in every mode that asks (``dontAsk`` denies), after ``..`` and symlinks are
resolved. Generated families of paths — inside and outside the working directory, through
symlinks, secret-looking names in any case — with the everyday reads that must stay allowed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from fakes import make_ctx
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from suite_counts import report

from jupyter_toolagent.core.tool import Tool
from jupyter_toolagent.permissions import PermissionContext
from jupyter_toolagent.permissions.engine import decide_input
from jupyter_toolagent.tools.glob_files import Glob
from jupyter_toolagent.tools.grep import Grep
from jupyter_toolagent.tools.read import Read

MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
ALWAYS_ASKS = {"default": "ask", "acceptEdits": "ask", "plan": "ask", "bypassPermissions": "ask", "dontAsk": "deny"}
OUTSIDE = {"default": "ask", "acceptEdits": "ask", "plan": "ask", "bypassPermissions": "allow", "dontAsk": "deny"}
ALLOWED = {mode: "allow" for mode in MODES}
PROPERTIES = settings(max_examples=60, derandomize=True, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
COUNTS = {"secret": 0, "system": 0, "outside": 0, "everyday": 0, "wrong": 0}

WORD = st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True)
DIRS = st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), max_size=3)
EXTENSIONS = st.sampled_from(["csv", "py", "txt", "json", "parquet", "md", "ipynb", "yaml"])


@st.composite
def any_case(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.upper() if f else c for c, f in zip(text, flips))


@st.composite
def secret_relative(draw: st.DrawFn) -> str:
    """A secret-looking relative path (its name in random case), maybe in subdirectories."""
    word, ext = draw(WORD), draw(EXTENSIONS)
    template = draw(st.sampled_from([
        ".env", f".env.{word}", f"{word}.pem", f"{word}.key", "id_rsa", "id_ed25519", f"id_{word}.pub", ".netrc",
        ".pgpass", "credentials", f"credentials.{ext}", f"credentials_{word}.{ext}", ".git-credentials",
        ".aws/credentials", ".aws/config", f".config/gcloud/{word}.json", f".azure/{word}", ".kube/config",
        ".docker/config.json", f".ssh/{word}", f"{word}.p12",
    ]))
    return "/".join([*draw(DIRS), draw(any_case(template))])


@st.composite
def everyday_relative(draw: st.DrawFn) -> str:
    name = f"{draw(WORD)}.{draw(EXTENSIONS)}"
    assume(not name.startswith(("credentials", "id_", ".env")))
    return "/".join([*draw(DIRS), name])


async def decision(perms: PermissionContext, tool: Tool, input: dict[str, Any], mode: str) -> Any:
    perms.base_mode = mode  # type: ignore[assignment]
    return await decide_input(tool, input, make_ctx(perms))


def materialise(root: Path, relative: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text("x\n")
    return path


async def expect(perms: PermissionContext, tool: Tool, input: dict[str, Any], table: dict[str, str], kind: str,
                 decided_by: str | None = None) -> None:
    for mode in MODES:
        got = await decision(perms, tool, input, mode)
        if got.behavior != table[mode] or (decided_by and got.behavior == "ask" and got.decided_by != decided_by):
            COUNTS["wrong"] += 1
            raise AssertionError(f"{tool.name} {input} in {mode}: {got.behavior} by {got.decided_by} ({got.message})")
    COUNTS[kind] += 1


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[PermissionContext, Path, Path]:
    cwd = tmp_path / "project"
    home = tmp_path / "home"
    outside = tmp_path / "elsewhere"
    for d in (cwd, home, outside):
        d.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return PermissionContext(cwd=Path(os.path.realpath(cwd))), Path(os.path.realpath(home)), Path(os.path.realpath(outside))


@pytest.mark.asyncio
@PROPERTIES
@given(relative=secret_relative(), where=st.sampled_from(["cwd", "home", "outside", "link-in-cwd"]))
async def test_secret_looking_files_always_ask(workspace: Any, relative: str, where: str) -> None:
    perms, home, outside = workspace
    base = {"cwd": perms.cwd, "home": home, "outside": outside, "link-in-cwd": outside}[where]
    target = materialise(base, relative)
    path = str(target)
    if where == "link-in-cwd":  # an innocent name inside the working directory pointing at it
        link = perms.cwd / f"notes_{abs(hash(relative)) % 10_000}.txt"
        if not link.is_symlink():
            link.symlink_to(target)
        path = link.name
    elif where == "cwd":
        path = relative
    elif where == "home":
        path = "~/" + relative
    await expect(perms, Read(), {"file_path": path}, ALWAYS_ASKS, "secret", "safety")
    await expect(perms, Grep(), {"pattern": "x", "path": path}, ALWAYS_ASKS, "secret", "safety")


@pytest.mark.asyncio
@PROPERTIES
@given(tail=st.sampled_from(["self/environ", "1/environ", "self/cmdline", "self/mem", "", "self/fd/0"]),
       route=st.sampled_from(["direct", "dotdot", "dev-fd", "link", "sys", "dev"]), depth=st.integers(1, 4))
async def test_proc_sys_and_dev_always_ask_however_they_are_reached(workspace: Any, tail: str, route: str,
                                                                   depth: int) -> None:
    perms, _, _ = workspace
    target = f"/proc/{tail}".rstrip("/")
    path = {
        "direct": target,
        "dotdot": "/".join([".."] * (len(perms.cwd.parts) + depth)) + target,
        "dev-fd": "/dev/fd/../.." + target,
        "link": "innocent_link",
        "sys": "/sys/kernel/" + (tail.replace("/", "_") or "x"),
        "dev": "/dev/" + (tail.split("/")[0] or "null"),
    }[route]
    if route == "link" and not (perms.cwd / "innocent_link").is_symlink():
        (perms.cwd / "innocent_link").symlink_to("/proc/self")
    await expect(perms, Read(), {"file_path": path}, ALWAYS_ASKS, "system", "safety")
    await expect(perms, Glob(), {"pattern": "*", "path": path}, ALWAYS_ASKS, "system", "safety")


@pytest.mark.asyncio
@PROPERTIES
@given(relative=everyday_relative(), how=st.sampled_from(["absolute", "home", "dotdot", "link-out"]))
async def test_everyday_reads_outside_the_working_directory_ask(workspace: Any, relative: str, how: str) -> None:
    perms, home, outside = workspace
    target = materialise(home if how == "home" else outside, relative)
    path = {"absolute": str(target), "home": "~/" + relative, "dotdot": "../elsewhere/" + relative,
            "link-out": "out_link/" + relative}[how]
    if how == "link-out" and not (perms.cwd / "out_link").is_symlink():
        (perms.cwd / "out_link").symlink_to(outside)
    await expect(perms, Read(), {"file_path": path}, OUTSIDE, "outside", "default")


@pytest.mark.asyncio
@PROPERTIES
@given(relative=everyday_relative())
async def test_everyday_reads_inside_the_working_directory_stay_allowed(workspace: Any, relative: str) -> None:
    perms, _, _ = workspace
    materialise(perms.cwd, relative)
    await expect(perms, Read(), {"file_path": relative}, ALLOWED, "everyday")
    await expect(perms, Grep(), {"pattern": "x", "path": relative.split("/")[0]}, ALLOWED, "everyday")
    await expect(perms, Glob(), {"pattern": "**/*." + relative.rsplit(".", 1)[1]}, ALLOWED, "everyday")


@pytest.mark.asyncio
async def test_named_counterparts(workspace: Any) -> None:
    perms, _, _ = workspace
    for name in ("data/x.csv", "environment.yml", "monkey.txt", "keys.py", "id_list.csv", "tokenizer.json",
                 "credits.csv", "src/pkg/key_utils.py", "notebooks/env_setup.ipynb"):
        materialise(perms.cwd, name)
        await expect(perms, Read(), {"file_path": name}, ALLOWED, "everyday")
    await expect(perms, Glob(), {"pattern": "**/*.py"}, ALLOWED, "everyday")
    await expect(perms, Glob(), {"pattern": "data/*.csv"}, ALLOWED, "everyday")


@pytest.mark.asyncio
async def test_an_allow_rule_or_a_hook_does_not_skip_the_secret_check(workspace: Any) -> None:
    from jupyter_toolagent.core.permission_types import PermissionDecision

    perms, _, _ = workspace
    materialise(perms.cwd, ".env")
    perms.add_rules({"allow": ["Read", "Read(./**)"]}, source="flag")
    for mode in MODES:
        perms.base_mode = mode  # type: ignore[assignment]
        got = await decide_input(Read(), {"file_path": ".env"}, make_ctx(perms),
                           hook_decision=PermissionDecision("allow", decided_by="hook"))
        assert got.behavior == ALWAYS_ASKS[mode], (mode, got)
        assert "looks like a credentials file" in got.message


@pytest.mark.asyncio
async def test_grep_over_a_directory_leaves_credentials_files_out(workspace: Any) -> None:
    from jupyter_toolagent.core.run_tool_use import run_tool_use

    perms, _, _ = workspace
    (perms.cwd / "data").mkdir()
    (perms.cwd / "data" / "x.csv").write_text("API_KEY placeholder column\n")
    (perms.cwd / "deploy.pem").write_text("API_KEY=-----BEGIN PRIVATE KEY-----\n")
    (perms.cwd / "Credentials.json").write_text('{"API_KEY": "abc"}\n')
    block = {"type": "tool_use", "id": "toolu_grep", "name": "Grep",
             "input": {"pattern": "API_KEY", "output_mode": "content", "glob": ["*.csv", "*.pem", "*.json"]}}
    outcome = await run_tool_use(block, make_ctx(perms, Grep()))
    assert not outcome.is_error, outcome.result
    text = str(outcome.result["content"])
    assert "placeholder column" in text
    assert "PRIVATE KEY" not in text and '"abc"' not in text
    assert "2 files that look like credentials" in text


def test_zz_report_counts() -> None:
    report("read_paths_secret_checked", COUNTS["secret"], "secret-looking paths × tools, each in every mode")
    report("read_paths_system_checked", COUNTS["system"], "/proc, /sys, /dev paths × tools, each in every mode")
    report("read_paths_outside_checked", COUNTS["outside"], "everyday files outside cwd")
    report("read_paths_everyday_allowed", COUNTS["everyday"], "everyday reads inside cwd")
    report("read_paths_wrong_decisions", COUNTS["wrong"])
    assert COUNTS["wrong"] == 0
