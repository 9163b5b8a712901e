"""The Linux backend: a `SandboxPolicy` as a ``bwrap`` command line (Debian package ``bubblewrap``).

Built as plain data so tests can read exactly which mounts a policy makes. The order of the
mount options matters — bubblewrap applies them one after another — and is:

1. ``--ro-bind / /`` the whole host read-only, ``--dev /dev``, a fresh ``--proc /proc`` of
   the new pid namespace (only the command's own processes, so no other process's environ),
   ``--tmpfs /tmp`` (private);
2. the working directory (and the settings' write directories) bound again — writable, or
   read-only in the read-only policy — *after* the private ``/tmp``, so a project that lives
   under ``/tmp`` is still the real one;
3. protected paths bound read-only over the writable ones;
4. hidden paths last: an empty read-only tmpfs over a directory, an empty read-only file over
   a file.

``--unshare-all`` gives new user, ipc, pid, network, uts and cgroup namespaces;
``--share-net`` puts the network back for a writable policy that allows it.
``--die-with-parent`` and ``--new-session``: when the runtime kills ``bwrap`` (timeout, Stop),
the sandbox's pid 1 gets SIGKILL and the kernel ends every process in the namespace, so
nothing outlives the call; the command cannot reach the kernel's terminal either.
"""

from __future__ import annotations

import os
import stat
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from .policy import SandboxPolicy

__all__ = ["bwrap_argv", "empty_file"]


@lru_cache(maxsize=1)
def empty_file() -> str:
    """A read-only empty file, created once per process, mounted over hidden files."""
    fd, path = tempfile.mkstemp(prefix="toolagent-hidden-")
    os.close(fd)
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return path


def bwrap_argv(policy: SandboxPolicy, command: Sequence[str], *, bwrap: str = "bwrap") -> list[str]:
    """The full argv that runs ``command`` inside ``policy``."""
    argv = [bwrap, "--unshare-all"]
    if policy.confinement == "writable" and policy.network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session",
             "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    if policy.confinement == "writable":
        for root in policy.writable or (policy.cwd,):
            argv += ["--bind", str(root), str(root)]
    else:
        argv += ["--ro-bind", str(policy.cwd), str(policy.cwd)]
    for path in policy.protected:
        argv += ["--ro-bind", str(path), str(path)]
    for path in _outermost(policy.hidden):
        if path.is_dir() and not path.is_symlink():
            argv += ["--tmpfs", str(path), "--remount-ro", str(path)]
        elif path.exists():
            argv += ["--ro-bind", empty_file(), str(path)]
    argv += ["--chdir", str(policy.cwd), "--", *command]
    return argv


def _outermost(paths: Sequence[Path]) -> list[Path]:
    """Drop paths inside another hidden directory (already covered, and no longer there to
    mount over once the directory is an empty tmpfs)."""
    kept: list[Path] = []
    for path in sorted(set(paths), key=lambda p: len(p.parts)):
        if not any(path.is_relative_to(k) for k in kept if k.is_dir()):
            kept.append(path)
    return kept
