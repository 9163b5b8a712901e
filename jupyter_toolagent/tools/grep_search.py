"""Grep's two search backends: ripgrep when installed, Python's `re` otherwise.

Both return the same `SearchResult` — every matching line of every searched file, keyed by
absolute path — and Grep formats and sorts it, so the model sees the same answer either way.
Shared rules: ripgrep's file selection (`ignore_walk`); one line at a time (a match never spans
lines); a UTF-8 BOM is dropped and UTF-16 with a BOM is decoded; a file containing a NUL byte is
binary and skipped whole. ripgrep is run with ``--no-config`` and ``--no-ignore-global`` (no
per-user settings that Python could not see) and from inside the search root (``rg … .``), which
is where ripgrep applies parent ``.gitignore`` files correctly.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import PatternRejected
from .ignore_walk import walk_files

__all__ = ["MAX_MATCHES", "SearchQuery", "SearchResult", "search_python", "search_ripgrep"]

MAX_MATCHES = 100_000
"""Matching lines kept per search; past this the search stops and says so."""
MAX_EVENT_BYTES = 1 << 26
"""Longest ``--json`` line read from ripgrep (a match in a minified file is one long line)."""


@dataclass(frozen=True)
class SearchQuery:
    pattern: str
    root: str
    """Absolute path of the directory or file to search."""
    globs: tuple[str, ...] = ()
    ignore_case: bool = False


@dataclass
class SearchResult:
    files: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    """Absolute path → (line number, line text without its line ending) of each matching line."""
    complete: bool = True
    backend: str = "python"
    note: str = ""
    kept: int = 0


# --- Python ----------------------------------------------------------------------------------
def compile_search_regex(query: SearchQuery) -> re.Pattern[str]:
    try:
        return re.compile(query.pattern, re.IGNORECASE if query.ignore_case else 0)
    except re.error as exc:
        raise PatternRejected(f"invalid regular expression {query.pattern!r}: {exc}") from None


def _decoded(data: bytes) -> bytes | None:
    """The file's bytes as ripgrep searches them (BOM handling), or None if binary."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        data = data.decode("utf-16", errors="replace").encode("utf-8")
    return None if b"\0" in data else data


def _search_file(path: str, regex: re.Pattern[str], budget: int) -> list[tuple[int, str]] | None:
    try:
        with open(path, "rb") as f:
            data = _decoded(f.read())
    except OSError:
        return None
    if not data:
        return None
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    found = []
    for number, raw in enumerate(lines, start=1):
        text = raw.decode("utf-8", errors="replace")
        if regex.search(text):
            found.append((number, text))
            if len(found) >= budget:
                break
    return found or None


def search_python(query: SearchQuery) -> SearchResult:
    """Search with Python's `re`, visiting the files ripgrep would (blocking: run in a thread)."""
    regex = compile_search_regex(query)
    result = SearchResult(backend="python")
    for path in walk_files(query.root, list(query.globs)):
        found = _search_file(path, regex, MAX_MATCHES - result.kept)
        if found:
            result.files[path] = found
            result.kept += len(found)
            if result.kept >= MAX_MATCHES:
                result.complete = False
                break
    return result


# --- ripgrep ---------------------------------------------------------------------------------
def ripgrep_command(rg: str, query: SearchQuery) -> tuple[list[str], str]:
    """The argv and working directory for ``query``."""
    args = [rg, "--json", "--no-config", "--no-mmap", "--no-ignore-global", "--color", "never"]
    if query.ignore_case:
        args.append("--ignore-case")
    for glob in query.globs:
        args += ["--glob", glob]
    args += ["-e", query.pattern, "--"]
    if os.path.isdir(query.root):
        return [*args, "."], query.root
    return [*args, os.path.basename(query.root)], os.path.dirname(query.root)


def _text(field_value: dict[str, Any]) -> str:
    if "text" in field_value:
        return field_value["text"]
    return base64.b64decode(field_value.get("bytes", "")).decode("utf-8", errors="replace")


def _take_event(event: dict[str, Any], cwd: str, result: SearchResult, binary: set[str]) -> bool:
    """Fold one ``--json`` event into ``result``; False once `MAX_MATCHES` lines are kept."""
    kind, data = event.get("type"), event.get("data", {})
    if kind == "match":
        path = os.path.normpath(os.path.join(cwd, _text(data["path"])))
        line = _text(data["lines"])
        line = line[:-1] if line.endswith("\n") else line
        lines = result.files.setdefault(path, [])
        lines.append((int(data["line_number"]), line))
        result.kept += 1
        return result.kept < MAX_MATCHES
    if kind == "end" and data.get("binary_offset") is not None:
        binary.add(os.path.normpath(os.path.join(cwd, _text(data["path"]))))
    return True


async def search_ripgrep(query: SearchQuery, rg: str) -> SearchResult:
    """Search with ripgrep. Raises `PatternRejected` if ripgrep cannot compile the pattern."""
    argv, cwd = ripgrep_command(rg, query)
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, limit=MAX_EVENT_BYTES,
    )
    assert proc.stdout is not None and proc.stderr is not None
    result = SearchResult(backend="ripgrep")
    binary: set[str] = set()
    stderr_task = asyncio.ensure_future(proc.stderr.read())
    try:
        async for raw in proc.stdout:
            if not _take_event(json.loads(raw), cwd, result, binary):
                result.complete = False
                proc.kill()
                break
        await proc.wait()
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        stderr_task.cancel()
        raise
    stderr = (await stderr_task).decode("utf-8", errors="replace")
    if proc.returncode == 2 and not result.files and "regex" in stderr.lower():
        raise PatternRejected(stderr.strip())
    if proc.returncode not in (0, 1) and result.complete and not result.files and stderr.strip():
        raise OSError(f"ripgrep failed: {stderr.strip()[:500]}")
    for path in binary:
        result.files.pop(path, None)
    return result
