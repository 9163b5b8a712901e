"""Reading a command's options the way getopt does, for the permission checks.

Several programs take a command line or program text as an option value (``env -S 'rm x'``,
``flock -c 'rm x'``, ``python3 -Ic CODE``, ``git rebase -x CMD``). The value may be the next
word (``-c CMD``, ``--command CMD``), attached (``-cCMD``, ``--command=CMD``) or follow a
cluster of flags (``-qc CMD``). These helpers find such values; they know nothing about any
particular program — the callers pass the option letters and names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True)
class OptionSpec:
    """How one program reads its options.

    ``wanted``/``wanted_long``: the options whose values the caller wants. ``valued``/
    ``valued_long``: other options that take a value (skipped, so their value is not taken for
    an operand). ``attached``: letters whose value can only be attached (perl's ``-i.bak``).
    ``stops``: letters after which the program stops reading options (python's ``-m``)."""

    wanted: str = ""
    wanted_long: tuple[str, ...] = ()
    valued: str = ""
    valued_long: tuple[str, ...] = ()
    attached: str = ""
    stops: str = ""
    known_long: tuple[str, ...] = ()
    """The program's other long options (flags): with ``abbreviations``, a word equal to one of
    them is that option, not an abbreviation (``--start`` is not ``--startas``)."""
    abbreviations: bool = False
    """Long options may be shortened to a unique prefix (GNU getopt_long, git's parse-options):
    a prefix of a wanted or valued option counts as that option (`may_abbreviate`)."""


@dataclass(frozen=True)
class OptionScan:
    values: tuple[tuple[str, int], ...]
    """The wanted values, each with the index of the first word after it."""
    first_operand: int | None
    """Index of the first word that is not an option or an option's value (None: none)."""


def may_abbreviate(name: str, option: str, known: Iterable[str] = ()) -> bool:
    """Whether the long option word ``name`` (``--out``, no ``=value``) may mean ``option``
    (``--output``) to a program whose long options may be shortened to a unique prefix (GNU
    ``getopt_long``, git's parse-options, Python's optparse/argparse).

    Over-inclusive on purpose: a prefix of ``option`` counts unless it is exactly another option
    the program has (``--text`` is git's own option, not ``--textconv``). A prefix shared by two
    options is an error to the program (it runs nothing), so counting it costs a question at most.
    """
    if name == option:
        return True
    return len(name) > 2 and name.startswith("--") and option.startswith(name) and name not in known


def long_option_meanings(name: str, known: Iterable[str]) -> frozenset[str]:
    """The options of ``known`` that the long option word ``name`` may mean: itself when it is
    one of them, else every option it is a prefix of (empty: an option the program lacks)."""
    options = frozenset(known)
    if name in options:
        return frozenset({name})
    if len(name) <= 2 or not name.startswith("--"):
        return frozenset()
    return frozenset(o for o in options if o.startswith(name))


def long_option_name(word: str) -> str:
    """``--output=F`` → ``--output``."""
    return word.split("=", 1)[0]


def _long_matches(name: str, names: Sequence[str], spec: OptionSpec) -> bool:
    if name in names:
        return True
    known = (*spec.known_long, *spec.wanted_long, *spec.valued_long)
    return spec.abbreviations and any(may_abbreviate(name, n, known) for n in names)


def scan_options(words: Sequence[str], spec: OptionSpec, start: int = 1) -> OptionScan:
    """Options from ``words[start:]`` up to the first operand (or ``--``)."""
    values: list[tuple[str, int]] = []
    i = start
    while i < len(words):
        word = words[i]
        if word == "--":
            return OptionScan(tuple(values), i + 1 if i + 1 < len(words) else None)
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            takes = _long_matches(name, spec.wanted_long, spec)
            if takes or _long_matches(name, spec.valued_long, spec):
                if not eq and i + 1 < len(words):
                    value, i = words[i + 1], i + 1
                if takes:
                    values.append((value, i + 1))
            i += 1
            continue
        if not word.startswith("-") or word == "-":
            return OptionScan(tuple(values), i)
        for j, letter in enumerate(word[1:], start=1):
            if letter in spec.stops:  # `python -m mod`: what runs is named here
                return OptionScan(tuple(values), i)
            if letter in spec.attached:
                break
            if letter in spec.wanted or letter in spec.valued:
                value = word[j + 1 :]
                if not value and i + 1 < len(words):
                    value, i = words[i + 1], i + 1
                if letter in spec.wanted:
                    values.append((value, i + 1))
                break
        i += 1
    return OptionScan(tuple(values), None)


def option_values(words: Sequence[str], spec: OptionSpec, start: int = 1) -> list[str]:
    """The values of the wanted options, anywhere in ``words`` (programs that permute their
    arguments, like GNU getopt, accept options after operands: ``flock FILE -c CMD``)."""
    found: list[str] = []
    i = start
    while i < len(words):
        scan = scan_options(words, spec, i)
        found.extend(value for value, _ in scan.values)
        if scan.first_operand is None or words[scan.first_operand - 1] == "--":
            break
        i = scan.first_operand + 1
    return found
