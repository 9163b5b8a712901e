"""Environment and process runners: programs whose arguments name the command they run.

``uv run rm x`` runs ``rm x``; so do ``conda run -n env rm x``, ``poetry run``, ``pipenv run``,
``hatch run``, ``pixi run``, ``direnv exec DIR rm x``, ``dotenv -f .env run rm x``, ``mise exec
node@20 -- rm x``, ``setarch x86_64 rm x``, ``sshpass -p pw rm x``, ``rlwrap rm x``; and some take
the command as an option value: ``nix-shell --run 'rm x'`` (a command line for a shell),
``start-stop-daemon --start --exec /bin/rm -- x`` (a program, its arguments after ``--``).

Each runner is described by its grammar — the subcommand that runs something, the options that
take a value (so the value is not read as the command), the options whose value is a program or
a command line, and how many operands come before the command — and `runner_commands` reads a
command line with it. Deny and ask rules look through runners (`shell.unwrap`); on top of the
grammar, the unwrapping also tries every later word as the start of a command, so an option
this table does not know cannot hide the command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from .options import OptionSpec, option_values, scan_options

__all__ = ["RUNNER_GRAMMARS", "Runner", "runner_commands"]


@dataclass(frozen=True)
class Runner:
    """How one runner names what it runs."""

    subcommands: tuple[tuple[str, ...], ...] = ()
    """The words after the runner's options that mean "run" (``uv run``, ``uv tool run``);
    empty: the command follows the options directly."""
    options: OptionSpec = field(default_factory=OptionSpec)
    """Its options: ``valued``/``valued_long`` take a value; ``wanted``/``wanted_long`` take a
    *program* to run (``start-stop-daemon --exec PATH``)."""
    scripts: OptionSpec | None = None
    """Options whose value is a command line run by a shell (``nix-shell --run CMD``)."""
    operands_before: int = 0
    """Operands between the subcommand and the command (``direnv exec DIR CMD``)."""
    after_separator: bool = False
    """The command follows a ``--`` when there is one (``mise exec TOOLS -- CMD``)."""


_CONDA = Runner(subcommands=(("run",),), options=OptionSpec(
    valued="np", valued_long=("--name", "--prefix", "--cwd", "--env"), abbreviations=True))

RUNNER_GRAMMARS: dict[str, Runner] = {
    "uv": Runner(subcommands=(("run",), ("tool", "run")), options=OptionSpec(
        valued="wp", valued_long=("--with", "--with-editable", "--with-requirements", "--python", "--directory",
                                  "--project", "--package", "--env-file", "--index", "--extra", "--group",
                                  "--from", "--config-file", "--cache-dir", "--index-url", "--extra-index-url"))),
    "uvx": Runner(options=OptionSpec(valued="wp", valued_long=("--from", "--with", "--python", "--index-url"))),
    "conda": _CONDA, "mamba": _CONDA, "micromamba": _CONDA,
    "poetry": Runner(subcommands=(("run",),), options=OptionSpec(valued="CP", valued_long=("--directory", "--project"))),
    "pipenv": Runner(subcommands=(("run",),), options=OptionSpec(valued_long=("--python",))),
    "hatch": Runner(subcommands=(("run",), ("env", "run")), options=OptionSpec(
        valued="e", valued_long=("--env", "--data-dir", "--cache-dir", "--config"))),
    "pixi": Runner(subcommands=(("run",), ("exec",)), options=OptionSpec(
        valued="em", valued_long=("--environment", "--manifest-path", "--spec"))),
    "nix-shell": Runner(options=OptionSpec(valued="pIAE", valued_long=("--packages", "--arg", "--argstr", "--attr",
                                                                        "--expr", "--run", "--command")),
                        scripts=OptionSpec(wanted_long=("--run", "--command"), valued="pIA")),
    "nix": Runner(subcommands=(("develop",), ("shell",)), options=OptionSpec(valued="c", valued_long=("--command",)),
                  scripts=OptionSpec(wanted="c", wanted_long=("--command",))),
    "setarch": Runner(operands_before=1, options=OptionSpec(valued_long=("--uname-2.6",), abbreviations=True)),
    "start-stop-daemon": Runner(options=OptionSpec(
        wanted="xa", wanted_long=("--exec", "--startas"),
        valued="pnuUgrdNPcIkmCoOsR", valued_long=("--pidfile", "--name", "--user", "--group", "--chroot", "--chdir",
                                                  "--nicelevel", "--procsched", "--iosched", "--umask", "--signal",
                                                  "--retry", "--output", "--notify-timeout", "--chuid"),
        known_long=("--start", "--stop", "--status", "--test", "--oknodo", "--quiet", "--verbose", "--background",
                    "--make-pidfile", "--remove-pidfile", "--no-close", "--notify-await", "--help", "--version"),
        abbreviations=True), after_separator=True),
    "sshpass": Runner(options=OptionSpec(valued="pfdeP")),
    "rlwrap": Runner(options=OptionSpec(
        valued="abCDeffHlOoPpqSstwz", valued_long=("--break-chars", "--command-name", "--file", "--history-filename",
                                                  "--logfile", "--prompt-colour", "--pre-given", "--substitute-prompt",
                                                  "--filter", "--histsize", "--extra-char-after-completion"),
        abbreviations=True)),
    "direnv": Runner(subcommands=(("exec",),), operands_before=1),
    "dotenv": Runner(subcommands=(("run",),), options=OptionSpec(valued="fe", valued_long=("--file", "--export"))),
    "mise": Runner(subcommands=(("exec",), ("x",)), options=OptionSpec(
        valued="jCc", valued_long=("--jobs", "--cd", "--command")), after_separator=True,
        scripts=OptionSpec(wanted="c", wanted_long=("--command",))),
    "asdf": Runner(subcommands=(("exec",),)),
}
"""The runners deny rules look through, by the name of the program."""


def runner_commands(name: str, words: Sequence[str]) -> tuple[list[tuple[str, ...]], list[str]]:
    """What a runner command line runs: argument lists (the command, a program option's value
    with what follows ``--``) and command lines for a shell (``nix-shell --run``)."""
    runner = RUNNER_GRAMMARS[name]
    commands: list[tuple[str, ...]] = []
    scripts = option_values(words, runner.scripts) if runner.scripts is not None else []
    scan = scan_options(words, runner.options)
    for value, after in scan.values:  # `--exec PROGRAM`: run with what follows `--`
        rest = list(words[after:])
        arguments = rest[rest.index("--") + 1 :] if "--" in rest else []
        commands.append((value, *arguments))
    i = scan.first_operand
    if i is None:
        return commands, scripts
    if runner.subcommands:
        sub = next((s for s in runner.subcommands if tuple(words[i : i + len(s)]) == s), None)
        if sub is None:
            return commands, scripts
        i += len(sub)
        inner = scan_options(words, runner.options, i).first_operand  # `uv run --with x CMD`
        i = inner if inner is not None else len(words)
    i += runner.operands_before
    if runner.after_separator and "--" in words[i:]:
        i = words.index("--", i) + 1
    if i < len(words):
        commands.append(tuple(words[i:]))
    return commands, scripts
