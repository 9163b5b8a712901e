"""A directory tree that exercises every file-selection rule ripgrep has (for the Grep tests)."""

from __future__ import annotations

import codecs
from pathlib import Path


def write(root: Path, relative: str, content: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def build_tree(root: Path) -> Path:
    """Returns the repository root (``root/repo``); ``root/plain`` is a directory outside any repo."""
    repo = root / "repo"
    (repo / ".git" / "info").mkdir(parents=True)
    write(repo, ".git/info/exclude", "excluded.txt\n")
    write(repo, ".git/config", "hello from git internals\n")
    write(repo, ".gitignore", "build/\n*.log\n!keep.log\n/rootonly.txt\nsub/anch.txt\ndocs/**/*.tmp\n*.md\n")
    files = {
        "a.txt": "hello a\nnothing here\nHello capital\n",
        "b.py": "def hello():\n    return 'world'\n",
        "build/out.txt": "hello build\n",
        "x.log": "hello log\n",
        "keep.log": "hello kept log\n",
        "rootonly.txt": "hello root only\n",
        "excluded.txt": "hello excluded\n",
        "readme.md": "hello markdown\n",
        "sub/b.txt": "hello sub\n",
        "sub/anch.txt": "hello anchored\n",
        "sub/rootonly.txt": "hello sub rootonly\n",
        "sub/deep/c.txt": "hello deep\nhello again\n",
        "sub/notes.bak": "hello backup\n",
        "sub/important.log": "hello important\n",
        "sub/.gitignore": "*.bak\n!important.log\n",
        "docs/guide/x.tmp": "hello tmp\n",
        "docs/guide/x.txt": "hello guide\n",
        ".hidden/e.txt": "hello hidden dir\n",
        ".dot.txt": "hello dot file\n",
        "ign/secret.txt": "hello secret\n",
        ".ignore": "ign/\nonly_rg.txt\n",
        ".rgignore": "!only_rg.txt\n",
        "only_rg.txt": "hello rgignore wins\n",
        "nested/.git/HEAD": "ref: refs/heads/main\n",
        "nested/inner.md": "hello nested markdown\n",
        "nested/.gitignore": "*.skip\n",
        "nested/x.skip": "hello skipped\n",
        "crlf.txt": "hello world\r\nsecond world\r\n",
        "unicode.txt": "héllo wörld\nÉcole\n",
        "long.txt": "hello " + "y" * 2_000 + "\n",
        "dash-name.txt": "--hello\n",
    }
    for relative, content in files.items():
        write(repo, relative, content)
    write(repo, "bin_early.dat", b"hello\x00binary\n")
    write(repo, "bin_late.dat", b"hello early\n" + b"x" * 100_000 + b"\x00\nhello late\n")
    write(repo, "bom8.txt", codecs.BOM_UTF8 + "hello bom\n".encode())
    write(repo, "bom16.txt", codecs.BOM_UTF16_LE + "hello utf16\n".encode("utf-16-le"))
    (repo / "link.txt").symlink_to(repo / "a.txt")
    (repo / "linkdir").symlink_to(repo / "sub")
    plain = root / "plain"
    write(plain, ".gitignore", "*.txt\n")
    write(plain, "p.txt", "hello plain\n")
    write(plain, "q.md", "hello plain md\n")
    return repo
