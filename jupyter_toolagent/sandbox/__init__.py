"""The OS sandbox every ``Bash`` command runs in (SPEC §5.5): the wall behind the classifier.

    policy.py      `SandboxPolicy`: read-only or writable, network, protected and hidden paths
    choose.py      `policy_for`: the policy a permission decision calls for
    discovery.py   the existing protected and denied paths a policy mounts over
    bubblewrap.py  Linux: the policy as a ``bwrap`` argv
    seatbelt.py    macOS: the policy as a ``sandbox-exec`` profile (not exercised in CI)
    probe.py       `sandbox_status`: whether a sandbox starts on this machine (cached)
    launch.py      `confine`: the argv (and clean-up) for one command
    gate.py        what the permission engine and ``%agent sandbox`` ask
"""

from __future__ import annotations

from .choose import policy_for
from .gate import describe_sandbox, read_only_shell_blocked, sandbox_line
from .launch import Launch, confine
from .policy import UNSANDBOXED_LABEL, SandboxPolicy
from .probe import KNOB, SandboxStatus, sandbox_status

__all__ = [
    "KNOB",
    "Launch",
    "SandboxPolicy",
    "SandboxStatus",
    "UNSANDBOXED_LABEL",
    "confine",
    "describe_sandbox",
    "policy_for",
    "read_only_shell_blocked",
    "sandbox_line",
    "sandbox_status",
]
