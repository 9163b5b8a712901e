"""File rules: gitignore-style patterns matched against resolved paths (SPEC §5.2).

Both sides are resolved before matching — the candidate path with `os.path.realpath` (so ``..``
and symlinks cannot step outside what a rule covers), and the literal directory part of each
pattern likewise — so a rule written as ``./data/**`` means the same files whether the data
directory is reached through a link or not.

Pattern forms (``base`` is the working directory, or for a settings-file rule the project
directory that holds ``.toolagent/``):

* ``/abs/**`` — absolute; ``~/x`` and ``~`` — the home directory;
* ``./data/**``, ``data/*.csv``, ``../shared/**`` — relative to ``base`` (anchored, as a
  pattern with a slash is in a .gitignore);
* ``*.csv``, ``secrets`` — no slash: any file of that name at any depth under ``base``. Outside
  ``base`` such a pattern still matches for deny and ask rules (it narrows everywhere) but not
  for allow rules: a rule can only widen access inside its own directory.

A pattern that names a directory covers everything under it (gitignore semantics); ``!`` and
``#`` at the start are literal characters here, not negation or comments.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pathspec

_GLOB_CHARS = re.compile(r"[*?\[]")


def resolve_for_rules(path: str | os.PathLike[str], cwd: str | os.PathLike[str]) -> str:
    """The file ``path`` really is, as rules match it: absolute, normalised and symlink-free
    (``~`` expanded, relative to ``cwd``), so neither ``..`` nor a link steps around a rule.

    Not the path the model or a hook sees (`tools.file_tool.absolute_from_cwd` keeps links)."""
    expanded = os.path.expanduser(os.fspath(path))
    return os.path.realpath(os.path.join(os.fspath(cwd), expanded))


def is_inside(path: str, directory: str | os.PathLike[str]) -> bool:
    """Whether resolved ``path`` is ``directory`` or below it (``directory`` is resolved too)."""
    return _below(path, os.path.realpath(os.fspath(directory)))


def _below(path: str, root: str) -> bool:
    """`is_inside` for an already resolved ``root``."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class FilePattern:
    """A compiled pattern: a resolved anchor directory plus a gitignore pattern below it."""

    anchor: str
    spec: pathspec.PathSpec
    unanchored: bool

    def matches(self, path: str, *, widening: bool) -> bool:
        """Match a resolved absolute path. ``widening`` is True for allow rules."""
        if path != self.anchor and _below(path, self.anchor):
            return self.spec.match_file(os.path.relpath(path, self.anchor))
        if self.unanchored and not widening:
            return self.spec.match_file(path.lstrip(os.sep))
        return False


def compile_pattern(pattern: str, base: str) -> FilePattern:
    """Compile a rule's content for files; ``base`` is the directory relative patterns use."""
    text = pattern.strip()
    if text.startswith("~"):
        text = os.path.expanduser(text)
    trailing_slash = text.endswith("/") and len(text) > 1
    body = text.rstrip("/") if trailing_slash else text
    if not os.path.isabs(body) and "/" not in body:
        return FilePattern(os.path.realpath(base), _gitignore(_literal_start(body) + ("/" if trailing_slash else "")), True)
    if not os.path.isabs(body):
        body = os.path.join(base, body)
    anchor, rest = _split_literal_prefix(os.path.normpath(body))
    rest_pattern = "/" + rest + ("/" if trailing_slash else "")
    return FilePattern(anchor, _gitignore(rest_pattern), False)


def _split_literal_prefix(absolute: str) -> tuple[str, str]:
    """Split at the first component with a glob character; resolve the literal directory part.

    A fully literal path is resolved as a whole (a rule naming a symlink covers its target)."""
    parts = absolute.split(os.sep)
    for i, part in enumerate(parts):
        if _GLOB_CHARS.search(part):
            literal = os.sep.join(parts[:i]) or os.sep
            return os.path.realpath(literal), "/".join(_literal_start(p) if j == 0 else p for j, p in enumerate(parts[i:]))
    resolved = os.path.realpath(absolute)
    if resolved == os.sep:
        return os.sep, "**"
    return os.path.dirname(resolved), _escape_for_gitignore(os.path.basename(resolved))


def _literal_start(part: str) -> str:
    """Keep a leading ``!`` or ``#`` literal (no gitignore negation or comment)."""
    return "\\" + part if part[:1] in ("!", "#") else part


def _escape_for_gitignore(name: str) -> str:
    return re.sub(r"([*?\[\]\\!#])", r"\\\1", name)


@lru_cache(maxsize=1024)
def _gitignore(line: str) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines([line])


def path_rule_content(path: str, cwd: str | os.PathLike[str]) -> str:
    """The narrowest rule content naming one resolved ``path``: ``./rel`` inside ``cwd``,
    else absolute. Glob characters in file names are escaped."""
    root = os.path.realpath(os.fspath(cwd))
    if is_inside(path, root) and path != root:
        rel = os.path.relpath(path, root)
        return "./" + "/".join(_escape_for_gitignore(p) for p in Path(rel).parts)
    return "/" + "/".join(_escape_for_gitignore(p) for p in Path(path).parts[1:])
