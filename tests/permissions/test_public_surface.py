"""The permissions package's public names are pinned, and importing it (or the hooks module)
pulls in no IPython or ipywidgets."""

from __future__ import annotations

import subprocess
import sys

import jupyter_toolagent.permissions as permissions

EXPECTED = [
    "ACCEPT_EDITS_GRANT", "DecisionRecord", "MODES", "Mode", "PermissionContext", "PermissionRule",
    "RuleBasedPermissions", "RuleEntry", "Settings", "decide", "find_settings_file",
    "is_read_only_command", "load_settings", "parse_mode", "parse_rule", "path_denied", "split_command",
    "visible_tools",
]


def test_all_is_pinned() -> None:
    assert sorted(permissions.__all__) == sorted(EXPECTED)
    for name in EXPECTED:
        assert hasattr(permissions, name), name


def test_names_the_core_uses() -> None:
    from jupyter_toolagent.hooks import RegistryHookRunner, default_registry
    from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions, parse_mode, visible_tools

    perms = PermissionContext.from_sources(cwd=".", settings=False)
    added = perms.add_rules({"allow": ["Bash"], "deny": [], "ask": []}, source="flag")
    assert added and added[0] in perms.rules
    perms.base_mode = parse_mode("plan")
    assert perms.mode == "plan"
    assert callable(RuleBasedPermissions(None, interactive=False, approval_timeout=1.0))
    assert callable(visible_tools)
    assert RegistryHookRunner(default_registry).registries == (default_registry,)
    assert isinstance(perms.session_rules, list) and isinstance(perms.describe(), str)
    assert perms.remove_session_rule("Bash") is False


def test_no_ipython_on_import() -> None:
    code = (
        "import sys\n"
        "import jupyter_toolagent.permissions, jupyter_toolagent.hooks\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('IPython', 'ipywidgets', 'ipykernel'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
