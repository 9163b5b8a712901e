"""What a sandboxed shell command may touch (SPEC §5.5), as data that backends translate.

Two kinds of confinement, chosen by *why* the runtime allowed the command:

* ``read_only`` — the command was allowed because the shell classifier called it read-only.
  That classification is a guess about text; the sandbox makes it true: the whole file system
  is read-only and there is no network, so a misread write or upload fails.
* ``writable`` — a person approved it, a rule allowed it, or the mode is bypassPermissions.
  It may write the working directory, the private ``/tmp`` and the directories the settings
  list under ``"sandbox": {"write": [...]}``; network follows ``"sandbox": {"network": ...}``;
  protected paths inside those directories (``.git/``, rc files, ``.toolagent/`` … as
  `permissions.safety` defines them) stay read-only unless a person approved a safety ask
  for this very command.

In both kinds the command has its own pid namespace and ``/proc``, a private ``/tmp``, the
environment without the product's credentials, and the paths ``Read(...)`` deny rules cover
hidden (an empty directory or an empty file in their place).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = ["Confinement", "SandboxPolicy", "UNSANDBOXED_LABEL"]

Confinement = Literal["read_only", "writable"]

UNSANDBOXED_LABEL = "not sandboxed"


@dataclass(frozen=True)
class SandboxPolicy:
    """One command's confinement. Paths are absolute and resolved (bind mounts follow the
    real location, and a symlinked working directory must be bound where it really is)."""

    confinement: Confinement
    cwd: Path
    network: bool = False
    writable: tuple[Path, ...] = ()
    """Directories writable besides the private ``/tmp`` (empty for ``read_only``)."""
    protected: tuple[Path, ...] = ()
    """Existing protected paths inside `writable` that stay read-only."""
    hidden: tuple[Path, ...] = ()
    """Existing paths a ``Read(...)`` deny rule covers: replaced by an empty dir or file."""
    notes: tuple[str, ...] = field(default=())
    """What the policy could not do exactly (a walk that hit its bound), for ``%agent sandbox``."""

    @classmethod
    def read_only(cls, cwd: Path, *, hidden: tuple[Path, ...] = (), notes: tuple[str, ...] = ()) -> "SandboxPolicy":
        return cls("read_only", cwd, network=False, hidden=hidden, notes=notes)

    @property
    def label(self) -> str:
        """The line the tool card and a failed result show."""
        if self.confinement == "read_only":
            return "sandbox: read-only, no network"
        places = ", ".join(str(p) for p in self.writable) or str(self.cwd)
        return f"sandbox: writes to {places}" + ("" if self.network else ", no network")

    def describe(self) -> list[str]:
        """Plain-text lines for ``%agent sandbox``."""
        lines = [self.label]
        if self.confinement == "writable":
            lines.append("writable: " + ", ".join(str(p) for p in self.writable) + ", private /tmp")
            lines.append("protected (read-only): " + (", ".join(str(p) for p in self.protected) or "(none found)"))
        hidden = ", ".join(str(p) for p in self.hidden) or "(none)"
        lines.append(f"hidden (Read deny rules, kernel connection files): {hidden}")
        lines.extend(self.notes)
        return lines
