"""Which files a search visits: ripgrep's rules, in Python, for when ``rg`` is not installed.

Grep must answer the same with and without ripgrep, so this mirrors ripgrep's walker (the
``ignore`` crate) rather than git's or pathspec's semantics:

* Glob filters (``--glob``) are checked first and win outright: a file matching ``*.log`` is
  searched even if ``.gitignore`` lists it; with any filter given, a file matching none is skipped;
  ``!pattern`` excludes. Directories are only ever excluded by a ``!`` filter.
* Then ignore files, by kind in this order of precedence: ``.rgignore``, ``.ignore``,
  ``.gitignore``, ``.git/info/exclude``. Within a kind the nearest directory decides, and within a
  file the last matching line. Ignore files of the directories *above* the search root count too.
  ``.gitignore`` and ``exclude`` count only inside a git repository, and not above its root.
* Hidden entries (a name starting with ``.``) are skipped unless an ignore file whitelists them.
* Symbolic links are not followed; only regular files are searched. An explicitly named file is
  always searched.

Patterns follow ripgrep's glob dialect (`glob_regex`): ``*`` and ``?`` stop at ``/``, ``**``
spans directories, ``{a,b}`` alternatives, ``[...]`` classes, backslash escapes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Literal

__all__ = ["GlobFilter", "IgnoreRules", "glob_regex", "walk_files"]

Verdict = Literal["ignore", "whitelist"] | None
KINDS = (".rgignore", ".ignore", ".gitignore", "exclude")
MAX_BRACE_ALTERNATIVES = 256


# --- the glob dialect ----------------------------------------------------------------------------
def _expand_braces(pattern: str) -> list[str]:
    """``a.{py,ipynb}`` → ``a.py``, ``a.ipynb`` (nested braces too)."""
    depth, start = 0, -1
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                options, level, piece = [], 0, ""
                for ch in pattern[start + 1:i]:
                    if ch == "," and level == 0:
                        options.append(piece)
                        piece = ""
                        continue
                    level += ch == "{"
                    level -= ch == "}"
                    piece += ch
                options.append(piece)
                head, tail = pattern[:start], pattern[i + 1:]
                out: list[str] = []
                for option in options:
                    out.extend(_expand_braces(head + option + tail))
                    if len(out) > MAX_BRACE_ALTERNATIVES:
                        raise ValueError("too many {…} alternatives in the glob")
                return out
        i += 1
    return [pattern]


def _component(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(re.escape(text[i + 1]))
            i += 2
            continue
        if c == "*":
            while i + 1 < len(text) and text[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            start = i + 1
            if text[start:start + 1] in ("!", "^"):
                start += 1
            if text[start:start + 1] == "]":
                start += 1
            end = text.find("]", start)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = text[i + 1:end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^' if negate else ''}{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _translate(pattern: str) -> str:
    parts = pattern.split("/")
    out = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out += ".*" if last else "(?:.*/)?"
        else:
            out += _component(part) + ("" if last else "/")
    return out


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regex that full-matches the ``/``-separated paths ``pattern`` matches."""
    alternatives = [_translate(p) for p in _expand_braces(pattern)]
    return re.compile("(?s:" + "|".join(f"(?:{a})" for a in alternatives) + r")\Z")


# --- ignore files and glob filters ---------------------------------------------------------------
@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    whitelist: bool
    dir_only: bool


def _gitignore_rule(line: str) -> _Rule | None:
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line:
        return None
    whitelist = anchored = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
        anchored = line.startswith("/")
    else:
        if line.startswith("!"):
            whitelist, line = True, line[1:]
        if line.startswith("/"):
            line, anchored = line[1:], True
    dir_only = line.endswith("/")
    if dir_only:
        line = line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    if not anchored and "/" not in line and not line.startswith("**/"):
        line = "**/" + line
    if line.endswith("/**"):
        line += "/*"
    try:
        return _Rule(glob_regex(line), whitelist, dir_only)
    except (re.error, ValueError):
        return None


class IgnoreRules:
    """The lines of one ignore file (or the glob filters), evaluated the ripgrep way."""

    def __init__(self, rules: list[_Rule]) -> None:
        self.rules = rules

    @classmethod
    def from_lines(cls, lines: list[str]) -> "IgnoreRules":
        return cls([r for r in (_gitignore_rule(line) for line in lines) if r is not None])

    @classmethod
    def from_file(cls, path: str) -> "IgnoreRules | None":
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return cls.from_lines(f.read().splitlines())
        except OSError:
            return None

    def verdict(self, relative: str, is_dir: bool) -> Verdict:
        for rule in reversed(self.rules):
            if (is_dir or not rule.dir_only) and rule.regex.fullmatch(relative):
                return "whitelist" if rule.whitelist else "ignore"
        return None


class GlobFilter:
    """Grep's ``glob`` filters (ripgrep's overrides): matched against paths relative to the root."""

    def __init__(self, globs: list[str]) -> None:
        self.rules = IgnoreRules.from_lines(globs)  # a plain glob "ignores"; inverted below
        self.whitelists = sum(1 for r in self.rules.rules if not r.whitelist)

    def verdict(self, relative: str, is_dir: bool) -> Verdict:
        if not self.rules.rules:
            return None
        found = self.rules.verdict(relative, is_dir)
        if found is None:
            return "ignore" if self.whitelists and not is_dir else None
        return "whitelist" if found == "ignore" else "ignore"


# --- directories and their ignore files ----------------------------------------------------------
@dataclass
class _Dir:
    path: str
    parent: "_Dir | None"
    has_git: bool
    files: dict[str, IgnoreRules | None]

    @classmethod
    def load(cls, path: str, parent: "_Dir | None") -> "_Dir":
        git = os.path.join(path, ".git")
        has_git = os.path.lexists(git)
        files = {kind: IgnoreRules.from_file(os.path.join(path, kind)) for kind in KINDS[:3]}
        files["exclude"] = IgnoreRules.from_file(os.path.join(git, "info", "exclude")) if os.path.isdir(git) else None
        return cls(path, parent, has_git, files)

    def chain(self) -> Iterator["_Dir"]:
        node: _Dir | None = self
        while node is not None:
            yield node
            node = node.parent


def _parents(root: str) -> _Dir | None:
    """The ignore files of every directory above ``root``, outermost first."""
    ancestors = []
    path = os.path.dirname(root)
    while True:
        ancestors.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    node = None
    for path in reversed(ancestors):
        node = _Dir.load(path, node)
    return node


def _ignore_verdict(directory: _Dir, path: str, is_dir: bool) -> Verdict:
    chain = list(directory.chain())
    any_git = any(d.has_git for d in chain)
    for kind in KINDS:
        git_kind = kind in (".gitignore", "exclude")
        if git_kind and not any_git:
            continue
        for d in chain:
            rules = d.files.get(kind)
            if rules is not None:
                found = rules.verdict(os.path.relpath(path, d.path).replace(os.sep, "/"), is_dir)
                if found is not None:
                    return found
            if git_kind and d.has_git:
                break
    return None


def _included(directory: _Dir, path: str, relative: str, name: str, is_dir: bool, globs: GlobFilter) -> bool:
    override = globs.verdict(relative, is_dir)
    if override is not None:
        return override == "whitelist"
    found = _ignore_verdict(directory, path, is_dir)
    if found == "ignore":
        return False
    return found == "whitelist" or not name.startswith(".")


def walk_files(root: str, globs: list[str] | None = None) -> Iterator[str]:
    """Absolute paths of the files a ripgrep search of ``root`` would visit (unordered)."""
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        if os.path.isfile(root):
            yield root
        return
    filters = GlobFilter(list(globs or []))
    stack = [(_Dir.load(root, _parents(root)), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory.path))
        except OSError:
            continue
        for entry in entries:
            relative = prefix + entry.name
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if not _included(directory, entry.path, relative, entry.name, is_dir, filters):
                continue
            if is_dir:
                stack.append((_Dir.load(entry.path, directory), relative + "/"))
            else:
                yield entry.path
