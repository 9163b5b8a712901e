"""What reading tools must always ask about (SPEC §5.3 steps 6 and 9).

``Read``, ``Glob`` and ``Grep`` run without asking because they only look — but looking is
exactly how a key leaves: ``/proc/<pid>/environ`` holds the kernel's environment, ``.env``
files and cloud CLI configuration hold credentials, and ``/sys`` and ``/dev`` expose the
machine. So a reading tool's path is checked twice:

* `check_file_read` — a *safety* reason (step 6: asks in every mode, ``bypassPermissions``
  included; no allow rule or hook skips it) when the path is under ``/proc``, ``/sys`` or
  ``/dev`` or looks like a secret: ``.env*``, ``*.pem``, ``*.key``, ``*.p12``/``*.pfx``, SSH key
  names (``id_rsa``, ``id_ed25519.pub`` — ``id_`` plus a word, with no other extension),
  ``.netrc``, ``.pgpass``, ``credentials*``, ``.git-credentials``, ``.pypirc``, ``.npmrc``, and
  anything under ``.ssh/``, ``.gnupg/``, ``.aws/``, ``.azure/``, ``.kube/``,
  ``.config/gcloud/`` or ``.docker/config.json`` — names compared case-insensitively;
* `read_auto_allowed` — step 9 auto-allows a read only inside the working directory.

Both the path as written (made absolute, ``..`` folded) and its fully resolved form are checked,
so neither a symlink named ``notes.txt`` pointing at ``.env`` nor one named ``.env`` pointing
elsewhere slips through.
"""

from __future__ import annotations

import fnmatch
import os
import re

from .file_rules import is_inside

__all__ = ["SYSTEM_TREES", "check_file_read", "looks_secret", "read_auto_allowed"]

SYSTEM_TREES = ("/proc", "/sys", "/dev")
SECRET_NAME_PATTERNS = (".env*", "*.pem", "*.key", "*.p12", "*.pfx", ".netrc", "_netrc", ".pgpass",
                        "credentials*", ".git-credentials", ".pypirc", ".npmrc")
_SSH_KEY_NAME = re.compile(r"id_[a-z0-9_-]+(\.pub)?")
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube"})
SECRET_SUBPATHS = ((".config", "gcloud"), (".docker", "config.json"))


def _in_system_tree(path: str) -> str | None:
    for tree in SYSTEM_TREES:
        if path == tree or path.startswith(tree + "/"):
            return tree
    return None


def looks_secret(path: str) -> bool:
    """Whether ``path`` (absolute) names a file that typically holds credentials."""
    parts = [p.lower() for p in path.split(os.sep) if p]
    if not parts:
        return False
    name = parts[-1]
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_NAME_PATTERNS) or _SSH_KEY_NAME.fullmatch(name):
        return True
    if SECRET_DIRS.intersection(parts[:-1]) or (name in SECRET_DIRS):
        return True
    for first, second in SECRET_SUBPATHS:
        for i in range(len(parts) - 1):
            if parts[i] == first and parts[i + 1] == second:
                return True
    return False


def check_file_read(written: str, resolved: str) -> str | None:
    """The safety reason a read of this path asks in every mode, or None. ``written`` is the
    path as given (absolute, ``..`` folded), ``resolved`` the symlink-free one."""
    for path in dict.fromkeys((resolved, written)):
        tree = _in_system_tree(path)
        if tree is not None:
            return (f"reading {path} looks into {tree}, where other processes' environments (the API key), memory "
                    "and devices are; a person decides")
    for path in dict.fromkeys((resolved, written)):
        if looks_secret(path):
            return f"{path} looks like a credentials file; reading it always needs a person's approval"
    return None


def read_auto_allowed(resolved: str, cwd: str | os.PathLike[str]) -> bool:
    """Step 9: a read-only reading tool is allowed without asking only inside ``cwd``."""
    return is_inside(resolved, cwd)
