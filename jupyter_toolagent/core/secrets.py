"""The one secret scrubber (SPEC §5.6): protected values never leave the kernel in output.

Masking a whole key is easy to get around: print ``key[:30]``, reverse it, put a line break
in the middle. So the rule is about *runs*: any 8 or more consecutive characters of a
protected value, forwards or reversed, with any whitespace or line breaks between them, are
replaced by `REDACTION`. A run of 7 characters of a 100-character random key tells an
attacker almost nothing, and 8 is short enough that slicing cannot get a useful piece out.

How it is fast: every 8-character piece of every value, and of its reverse, is a pattern of
one Aho–Corasick automaton (``ahocorasick_rs``, matching in native code). The text is
scanned once with its whitespace removed; only when something matches is a map from that
compact copy back to the original built, and the covered spans (merged, so overlapping and
adjacent pieces become one replacement) are cut out of the original text. A 50,000-character
result with several protected values costs about a millisecond when it holds none of them
(see ``benchmarks/b16_secret_scrub.py``).

Which values are protected (`protected_values`): the credential the product itself uses
(handed in by the model layer) and every environment variable whose name contains ``KEY``,
``TOKEN``, ``SECRET``, ``PASSWORD`` or ``CREDENTIAL`` (case-insensitive), read when a session
starts. Decisions about values the run rule cannot handle:

* shorter than 8 characters: a 6- or 7-character value that mixes letters with digits or
  punctuation (``hunt3r!``) is replaced wherever it occurs whole, forwards or reversed; a
  shorter or plainer one (``1``, ``true``, ``dev``, ``secret``) is not protected at all —
  replacing it everywhere would wreck ordinary output, and it carries no secret worth the
  damage;
* a value naming an existing file or directory (``GOOGLE_APPLICATION_CREDENTIALS=/home/u/key.json``)
  is not protected: the path is not the secret, and its runs (``/home/u/``) appear in every
  path the tools print. Reading the file it names is what the permission rules ask about.

The scrubber is the last line of defence, not the wall (the sandbox and the permission and
path rules are): it cannot see a value that code encoded (base64, hex, every other character).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import accumulate
from typing import Any

import ahocorasick_rs

__all__ = [
    "REDACTION",
    "RUN_LENGTH",
    "SECRET_NAME_MARKERS",
    "SecretScrubber",
    "environment_scrubber",
    "is_secret_name",
    "protected_values",
]

RUN_LENGTH = 8
"""Shortest run of a protected value that is replaced."""
SHORT_VALUE_LENGTH = 6
"""Values of this length up to ``RUN_LENGTH - 1`` are protected whole when they look random."""
REDACTION = "[secret]"
"""What replaces a run. Shorter than `RUN_LENGTH` letters and bracketed, so the replacement
itself can never form a new run of a protected value (unless the value contains brackets)."""
SECRET_NAME_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")

_WHITESPACE_RUNS = re.compile(r"\s+")
_IMAGE_TYPES = frozenset({"image", "document"})


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name marks its value as a secret (case-insensitive)."""
    upper = name.upper()
    return any(marker in upper for marker in SECRET_NAME_MARKERS)


def _looks_random(value: str) -> bool:
    """A short value worth protecting whole: letters mixed with digits or punctuation."""
    has_alpha = any(c.isalpha() for c in value)
    has_other = any(not c.isalpha() for c in value)
    return has_alpha and has_other


def _protectable(value: str) -> bool:
    if len(value) >= RUN_LENGTH:
        return True
    return len(value) >= SHORT_VALUE_LENGTH and _looks_random(value)


def _names_a_path(value: str) -> bool:
    if not (value.startswith(("/", "~")) or (len(value) > 2 and value[1] == ":")):
        return False
    try:
        return os.path.exists(os.path.expanduser(value))
    except (OSError, ValueError):
        return False


def protected_values(env: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The values a scrubber built now protects: ``extra`` (the product's own credential) and
    every secret-looking variable of ``env`` (default: ``os.environ``), minus those the module
    docstring explains are left alone. Sorted, without duplicates."""
    source = os.environ if env is None else env
    found = {v for v in extra if v}
    found |= {v for k, v in list(source.items()) if v and is_secret_name(k) and not _names_a_path(v)}
    return tuple(sorted(v for v in found if _protectable(_compact(v))))


def _compact(text: str) -> str:
    """``text`` without whitespace (``str.split`` and ``\\s`` agree on every code point)."""
    return "".join(text.split())


class SecretScrubber:
    """Replaces runs of protected values in text (see the module docstring for the rule).

    Immutable and thread-safe: tools running in worker threads share one. Build one with
    `environment_scrubber` (the environment now, plus the product's credential) or directly
    from values; `with_values` gives one protecting more.
    """

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        kept = {_compact(v) for v in values if v}
        self.values: tuple[str, ...] = tuple(sorted(v for v in kept if _protectable(v)))
        patterns: set[str] = set()
        for value in self.values:
            if len(value) < RUN_LENGTH:
                patterns.update((value, value[::-1]))
                continue
            for text in (value, value[::-1]):
                patterns.update(text[i:i + RUN_LENGTH] for i in range(len(text) - RUN_LENGTH + 1))
        self._automaton = ahocorasick_rs.AhoCorasick(sorted(patterns)) if patterns else None
        self._shortest = min((len(p) for p in patterns), default=0)

    def __bool__(self) -> bool:
        return self._automaton is not None

    def __repr__(self) -> str:  # never shows a value
        return f"SecretScrubber({len(self.values)} protected values)"

    def with_values(self, values: Iterable[str | None]) -> "SecretScrubber":
        """A scrubber protecting these values too (``self`` when they add nothing)."""
        more = {_compact(v) for v in values if v} - set(self.values)
        if not any(_protectable(v) for v in more):
            return self
        return _scrubber_for((*self.values, *more))

    # --- text ----------------------------------------------------------------------------
    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Covered spans of ``text`` (original indices, end exclusive), merged, in order."""
        if self._automaton is None or len(text) < self._shortest:
            return []
        words = text.split()
        compact = "".join(words)
        found = self._automaton.find_matches_as_indexes(compact, overlapping=True)
        if not found:
            return []
        merged: list[list[int]] = []
        for _, start, end in sorted(found, key=lambda m: m[1]):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        if len(compact) == len(text):
            return [(a, b) for a, b in merged]
        # Map compact indices back: word k starts at compact_starts[k] in the compact copy and
        # at compact_starts[k] + (all whitespace before it) in the original.
        gaps = list(map(len, _WHITESPACE_RUNS.findall(text)))
        if not text[:1].isspace():
            gaps.insert(0, 0)
        compact_starts = list(accumulate(map(len, words), initial=0))
        whitespace_before = list(accumulate(gaps))

        def original(index: int) -> int:
            word = bisect_right(compact_starts, index) - 1
            return index + whitespace_before[word]

        return [(original(a), original(b - 1) + 1) for a, b in merged]

    def finds(self, text: str) -> bool:
        """Whether ``text`` holds a run of a protected value."""
        return bool(self._spans(text))

    def scrub(self, text: str) -> str:
        """``text`` with every run of a protected value replaced by `REDACTION`; the same
        object when there is none."""
        spans = self._spans(text)
        if not spans:
            return text
        pieces: list[str] = []
        last = 0
        for start, end in spans:
            pieces.append(text[last:start])
            pieces.append(REDACTION)
            last = end
        pieces.append(text[last:])
        return "".join(pieces)

    # --- structured data -------------------------------------------------------------------
    def scrub_content(self, content: Any) -> Any:
        """Tool-result content (a string or a list of blocks), scrubbed. Image and document
        blocks are left as they are (their base64 data is not text anyone reads)."""
        if isinstance(content, str):
            return self.scrub(content)
        if isinstance(content, list):
            return [self._scrub_block(b) for b in content]
        return self.scrub_data(content)

    def _scrub_block(self, block: Any) -> Any:
        if isinstance(block, dict) and block.get("type") in _IMAGE_TYPES:
            return block
        return self.scrub_data(block)

    def scrub_result(self, result: dict[str, Any]) -> dict[str, Any]:
        """A ``tool_result`` block with its content scrubbed (a new dict when anything changed)."""
        content = result.get("content")
        cleaned = self.scrub_content(content)
        if cleaned is content:
            return result
        return {**result, "content": cleaned}

    def scrub_data(self, value: Any) -> Any:
        """Every string inside nested dicts, lists and tuples scrubbed (keys too); containers
        that hold nothing protected come back as the same objects."""
        if self._automaton is None:
            return value
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            if value.get("type") in _IMAGE_TYPES:
                return value
            items = [(self.scrub_data(k), self.scrub_data(v)) for k, v in value.items()]
            if all(a is k and b is v for (a, b), (k, v) in zip(items, value.items())):
                return value
            return dict(items)
        if isinstance(value, (list, tuple)):
            cleaned = [self.scrub_data(v) for v in value]
            if all(a is b for a, b in zip(cleaned, value)):
                return value
            return type(value)(cleaned) if isinstance(value, tuple) else cleaned
        return value


@lru_cache(maxsize=16)
def _scrubber_for(values: tuple[str, ...]) -> SecretScrubber:
    return SecretScrubber(values)


def environment_scrubber(env: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()) -> SecretScrubber:
    """A scrubber for the secret-looking variables of ``env`` (default: ``os.environ``, read
    now) plus ``extra``; built once per distinct set of values."""
    return _scrubber_for(protected_values(env, extra))
