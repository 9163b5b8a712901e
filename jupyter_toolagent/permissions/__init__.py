"""Permission rules, modes and the decision order (SPEC §5.1–5.3).

    rules.py          ``Tool`` / ``Tool(content)`` parsed into `PermissionRule`
    shell/            shell commands read the way bash does (bashlex), one question per module:
      parse.py        commands split into simple commands, read-only verdicts
      braces.py       words brace-expanded and unquoted as bash does (bracex), bounded
      wrappers.py     ``time``/``timeout``/``nice``/``nohup``/``env NAME=v`` stripped for matching
      readonly.py     which shell commands are read-only
      exit.py         exit codes that answer "no" (``grep`` 1 = no match), found on the parse tree
      rules.py        ``Bash(...)`` matching: lenient for deny/ask, strict for allow
      unwrap.py       every command a command may run (runners, ``sh -c``, ``env -S``, ``trap`` …)
      git.py          what git runs besides git (``-c core.pager=…``, ``rebase --exec`` …), and
                      whether it runs in the working directory's own repository
      runners.py      ``uv run``, ``conda run``, ``nix-shell --run`` … described by their grammars
      named_paths.py  the files a command names, resolved, for ``Read(...)`` deny rules
      interpreters.py inline program text and programs read from stdin (opaque)
      options.py      option values read the way getopt does (unique long-option prefixes too)
      cwd.py          the directory each part runs in (``cd`` followed)
      sed.py          sed scripts that run commands or read script files
    file_rules.py     gitignore-style file patterns on resolved paths
    safety.py         writes that ask in every mode; the protected list as data
                      (`safety.protected_path_patterns`, `safety.is_protected_path`)
    settings.py       ``.toolagent/settings.json``
    context.py        `PermissionContext`: rules by source, mode, session grants, decisions
    modes.py          how each mode maps a decision
    engine.py         `decide`: the decision order, side-effect free
    rule_based.py     `RuleBasedPermissions`: the core's ``can_use_tool`` (asks, records)

The core only sees `RuleBasedPermissions` (a ``CanUseTool``) and `visible_tools`; nothing
here imports IPython.
"""

from __future__ import annotations

from .context import ACCEPT_EDITS_GRANT, DecisionRecord, PermissionContext
from .engine import decide, path_denied, visible_tools
from .modes import MODES, Mode, parse_mode
from .rule_based import RuleBasedPermissions
from .rules import PermissionRule, RuleEntry, parse_rule
from .settings import Settings, find_settings_file, load_settings
from .shell import is_read_only_command, split_command

__all__ = [
    "ACCEPT_EDITS_GRANT",
    "DecisionRecord",
    "MODES",
    "Mode",
    "PermissionContext",
    "PermissionRule",
    "RuleBasedPermissions",
    "RuleEntry",
    "Settings",
    "decide",
    "find_settings_file",
    "is_read_only_command",
    "load_settings",
    "parse_mode",
    "parse_rule",
    "path_denied",
    "split_command",
    "visible_tools",
]
