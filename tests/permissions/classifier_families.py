"""Generated families of hostile shell commands, one per bypass class, and the everyday commands
beside each that must stay allowed (issue 14).

These strings are data: the tests only parse and classify them with the permission engine, and
the recording shell never runs anything. The families are built from tables written here, on
purpose independent of the classifier's own tables — a program or option the classifier forgot
then shows up as a failure instead of agreeing with itself.

A `Probe` says what counts as getting through, as in the R4 corpus (``tests/reliability``):

* ``deny`` — run ``rm`` past ``Bash(rm:*)``: an allow in default, bypassPermissions or dontAsk
  mode, or with the command's first word allowed too;
* ``read_only`` — classified read-only or auto-allowed (or not denied in plan mode) while it
  writes, runs a program, reaches the network or reads the environment;
* ``safety`` — writes a protected file without the person being asked (bypassPermissions mode,
  or ``Bash`` allowed as a whole);
* ``read_deny`` — reads a file under ``Read(./secrets/**)`` and is allowed (bypassPermissions).

An `Everyday` command must keep its behaviour: ``read_only`` — auto-allowed as read-only;
``not_denied`` — not denied by ``Bash(rm:*)``; ``bypass_allowed`` — allowed in bypassPermissions
mode (no safety ask); ``read_allowed`` — read-only and allowed beside ``Read(./secrets/**)``.

Run as a script (``python tests/permissions/classifier_families.py``) it prints the bypass and
false-ask counts per family for the code on ``sys.path`` — how the before/after figures are
measured.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import product
from pathlib import Path

SECRETS_RULE = "Read(./secrets/**)"


@dataclass(frozen=True)
class Probe:
    command: str
    kind: str
    family: str

    def __str__(self) -> str:
        return f"{self.family}:{self.kind}:{self.command[:70]!r}"


@dataclass(frozen=True)
class Everyday:
    command: str
    expect: str
    family: str

    def __str__(self) -> str:
        return f"{self.family}:{self.expect}:{self.command[:70]!r}"


# --- option tables (independent of the classifier's) ------------------------------------------------

WRITE_INVOCATIONS: list[tuple[str, ...]] = [
    # (program and subcommand …, option, value): each writes, runs a program or changes state
    ("sort", "-o", "out"), ("sort", "--output", "out"), ("sort", "--compress-program", "gzip"),
    ("tree", "-o", "out"), ("file", "-C", "-m"), ("file", "--compile", "-m"),
    ("rg", "--pre", "cat"), ("rg", "--hostname-bin", "cat"), ("fd", "-x", "ls"), ("fd", "--exec", "ls"),
    ("fd", "--exec-batch", "ls"), ("fd", "-X", "ls"), ("xxd", "-r", "in"),
    ("git log", "--output", "out"), ("git diff", "--output", "out"), ("git show", "--output", "out"),
    ("git diff", "--ext-diff", "HEAD"), ("git log", "--textconv", "-p"), ("git grep", "-O", "vi"),
    ("git grep", "--open-files-in-pager", "vi"), ("printf", "-v", "x"),
    ("find .", "-delete", "-print"), ("find .", "-exec", "ls"), ("find .", "-execdir", "ls"), ("find .", "-ok", "ls"),
    ("find .", "-fprint", "out"), ("find .", "-fprintf", "out"), ("find .", "-fls", "out"),
    ("pip list", "--log", "out"), ("pip list", "--outdated", "-v"), ("pip list", "--index-url", "http://x.invalid"),
    ("pip freeze", "-r", "http://x.invalid/r.txt"), ("pip show", "--log", "out"), ("pip list", "-o", "-v"),
]

LONG_OPTIONS: dict[str, list[str]] = {
    # program → its long options that write or run programs (each abbreviable by GNU getopt,
    # git's parse-options or optparse), and its other options that are prefixes of them
    "sort": ["--output", "--compress-program"],
    "file": ["--compile"],
    "git log": ["--output", "--ext-diff", "--textconv"],
    "git diff": ["--output", "--ext-diff", "--textconv"],
    "git show": ["--output", "--ext-diff", "--textconv"],
    "git grep": ["--open-files-in-pager"],
    "pip list": ["--log", "--outdated", "--uptodate", "--index-url", "--extra-index-url", "--find-links", "--python",
                 "--proxy", "--cache-dir"],
    "pip freeze": ["--requirement", "--log", "--python", "--path"],
}
SAFE_EXACT: dict[str, list[str]] = {"git log": ["--text"], "git diff": ["--text"], "git show": ["--text"],
                                    "git grep": ["--extended-regexp"]}
"""Options the program has that are themselves prefixes of a dangerous one (an exact match is
that option, not an abbreviation)."""

SCRIPT_OPTIONS: list[tuple[str, str, str]] = [
    # (program, long option whose value is a command line, what follows)
    ("sort", "--compress-program", "f"), ("env", "--split-string", ""), ("flock", "--command", "/tmp/l"),
    ("script", "--command", "/dev/null"), ("tar -cf a.tar", "--to-command", "."),
    ("tar -cf a.tar", "--use-compress-program", "."), ("man", "--pager", "ls"),
]

RUNNERS: list[str] = [
    # how each runner is written in front of a command it runs (the command follows)
    "uv run", "uv run --with pytest", "uv tool run", "uvx", "conda run -n base", "conda run --name base",
    "mamba run -n base", "poetry run", "pipenv run", "hatch run", "hatch run -e test", "pixi run", "pixi exec",
    "setarch x86_64", "setarch linux64 -R", "sshpass -p pw", "sshpass -e", "rlwrap", "rlwrap -a",
    "direnv exec .", "dotenv run", "dotenv -f .env run", "mise exec node@20 --", "mise x python@3.12 --",
]
SCRIPT_RUNNERS: list[str] = ["nix-shell --run", "nix-shell -p hello --run", "nix-shell --command", "mise exec --command"]
PROGRAM_RUNNERS: list[tuple[str, str]] = [
    ("start-stop-daemon --start --exec", " -- x"), ("start-stop-daemon -S -x", ""),
    ("start-stop-daemon --start --startas", " -- x"),
]

PROTECTED_EXAMPLES: list[str] = [
    # a concrete path for each protected place (~ is the fake home of the tests)
    ".git/config", ".git/hooks/pre-commit", ".toolagent/settings.json", "~/.ssh/authorized_keys", "~/.bashrc",
    "~/.bash_aliases", "~/.profile", "~/.gitconfig", "~/.config/git/config", "~/.ipython/profile_default/startup/0.py",
    "~/.jupyter/jupyter_server_config.py", ".venv/lib/python3.12/site-packages/evil.pth",
    ".venv/lib/python3.12/site-packages/sitecustomize.py", "~/.local/lib/python3.12/site-packages/usercustomize.py",
    "/usr/lib/python3/dist-packages/x.pth", ".venv/etc/ipython/startup.py", ".venv/etc/jupyter/jupyter_server_config.py",
    "/usr/local/etc/jupyter/x.py", "~/.ipython/profile_x/startup/00.py", "/etc/profile.d/x.sh", "/etc/bash.bashrc",
    "/etc/gitconfig", "~/.config/systemd/user/x.service", "~/.config/autostart/x.desktop", "~/.aws/credentials",
    "~/.kube/config", "~/.docker/config.json", "~/.netrc", "~/.git-credentials",
]
PATH_EXAMPLES: list[str] = ["~/.local/bin/git", "~/.local/bin/python3"]
"""Executables in a PATH directory searched before /usr/bin (the tests put ~/.local/bin first)."""
NOT_PROTECTED: list[str] = [
    "data/out.csv", "notes.md", "build/x.txt", ".venv/lib/python3.12/site-packages/pkg/mod.py", "docs/gitconfig.md",
    "src/site.py", "data/etc/notes.txt", ".gitignore",
]

PROC_PATHS: list[str] = [
    "/{proc,}/self/environ", "/{pr,}oc/self/envir{o,}n", "/pro{c,x}/1/environ", "/{p,q}roc/self/environ",
    "/proc/{self,1}/environ", "/{proc/self,x}/environ", "/pr{o..o}c/self/environ", "/dev/fd/../environ",
    "/dev/fd/../envir?n", "/dev/f?/../environ", "/dev/stdin/../../environ", "/dev/std*/../../environ",
    "/dev/fd/../../self/env*", "/{dev/fd/..,x}/environ",
]
READERS = ["cat", "head", "grep -a x", "wc -c", "strings", "sort"]


def brace_forms(words: tuple[str, ...]) -> list[str]:
    """Ways to write consecutive words as one brace word bash expands back to (at least) them."""
    joined = " ".join(words)
    forms = []
    if len(words) == 2:
        a, b = words
        forms += [f"{{{a},{b}}}", f"{{{a},}} {b}", f"{{{a},{b},}}", f"{{{{{a},}},{b}}}"]
        if "=" not in a and a.startswith("--"):
            forms.append(f"{{{a}={b},}}")
    for word in words[:1]:
        forms += [f"{{{word},}} " + " ".join(words[1:]), f"{{,{word}}} " + " ".join(words[1:])]
        if len(word) > 2:
            forms.append(f"{word[:2]}{{{word[2:]},}} " + " ".join(words[1:]))
    return [f.strip() for f in dict.fromkeys(forms) if f.strip() != joined]


def _prefixes(option: str) -> list[str]:
    return [option[:n] for n in range(3, len(option) + 1)]


def families() -> tuple[list[Probe], list[Everyday]]:
    probes: list[Probe] = []
    everyday: list[Everyday] = []

    # 1 braces around every write option of every classified program
    for program, option, value in WRITE_INVOCATIONS:
        for form in brace_forms((option, value)):
            probes.append(Probe(f"{program} {form} x", "read_only", "braces-write-option"))
    for path in (".git/config", "~/.bashrc", ".git/hooks/pre-commit"):
        head, _, tail = path.rpartition("/")
        for form in (f"{head}/{{{tail},x}}", f"{{{path},}}", f"{head}/{tail[:-1]}{{{tail[-1]}..{tail[-1]}}}",
                     f"{head}/{{{tail},{tail}}}"):
            probes += [Probe(f"cp x {form}", "safety", "braces-protected"),
                       Probe(f"sort {{-o,{form}}} x", "safety", "braces-protected")]
        probes.append(Probe(f"echo x > {head}/{tail[:-1]}{{{tail[-1]}..{tail[-1]}}}", "safety", "braces-protected"))
    for form in ("{rm,x} f", "{rm,} f", "{,rm} f", "r{m,} f", "{r,}m f", "{r..r}m f", "{{rm,},x} f", "r{m..m} -rf x",
                 "sudo {rm,x} f", "ls; {rm,x} f", "xargs {rm,} < f", "find . -exec {rm,} {} +", "env {rm,x} f"):
        probes.append(Probe(form, "deny", "braces-command-word"))
    for path in PROC_PATHS:
        for reader in READERS:
            probes.append(Probe(f"{reader} {path}", "read_only", "proc-through-braces-and-links"))
    probes += [Probe(c, "read_only", "braces-bounded") for c in ("echo {1..1000000}", "echo {a,b}{1..999}",
                                                                 "sort {-o,x}{1..2000} f")]
    probes += [Probe(c, "deny", "braces-bounded") for c in ("{rm,x}{1..2000} f", "r{m,}{1..5000} x")]
    everyday += [Everyday(c, "read_only", "braces") for c in (
        "echo {1..3}", "ls data/{a,b}.csv", "cat notes.{txt,md}", "echo '{a,b}'", "echo \\{a,b\\}", "ls {data,docs}",
        "wc -l data/{a..c}.csv", "echo {01..10}", "grep -n x {a,b}.txt", "echo a{b,c}d", "echo {a}", "head -n {1,2}",
        "git log --format={a,b} -1", "echo {x,y}z",
    )]
    everyday += [Everyday(c, "not_denied", "braces") for c in ("echo {rm,x}", "ls {rm,x}", "echo '{rm,x}' f")]

    # 2 unique prefixes of long options
    for program, options in LONG_OPTIONS.items():
        exact = set(SAFE_EXACT.get(program, []))
        for option in options:
            for prefix in _prefixes(option):
                if prefix in exact or any(prefix in _prefixes(o) for o in options[: options.index(option)]):
                    continue  # (a prefix shared with an option listed before is generated once)
                probes.append(Probe(f"{program} {prefix}=out x", "read_only", "long-option-prefix"))
                if option not in ("--outdated", "--uptodate"):
                    probes.append(Probe(f"{program} {prefix} out", "read_only", "long-option-prefix"))
                else:
                    probes.append(Probe(f"{program} {prefix}", "read_only", "long-option-prefix"))
    for program, option, tail in SCRIPT_OPTIONS:
        for prefix in _prefixes(option):
            probes.append(Probe(f"{program} {prefix}='rm x' {tail}".strip(), "deny", "long-option-prefix-script"))
    for prefix in _prefixes("--expression"):
        probes.append(Probe(f"sed -n {prefix}='1e' f", "deny", "long-option-prefix-script"))
    everyday += [Everyday(c, "read_only", "long-options") for c in (
        "sort --numeric-sort f", "sort --reverse --key=2 f", "sort -n -k 2 f", "git log --oneline -5", "git diff --stat",
        "git diff --text", "git show --name-only HEAD", "git grep -n foo", "git log --no-ext-diff -p", "pip list",
        "pip list --format=json", "pip list --local", "pip freeze --all", "pip show -f requests", "file --mime-type f",
        "rg --pre-glob '*.gz' x", "pip --version", "git grep --extended-regexp foo",
    )]

    # 3 find -- and test -v
    for action in ("-delete", "-exec ls {} +", "-execdir ls {} ;", "-fprint out", "-fls out", "-ok ls {} ;"):
        for head in ("find --", "find -L --", "find -H -- .", "find -- . -name x", "find -P -- . -type f"):
            probes.append(Probe(f"{head} {action}", "read_only", "find-after-dashdash"))
    probes += [Probe(f"{head} . -exec rm {{}} +", "deny", "find-after-dashdash") for head in ("find --", "find -L --")]
    for tester in ("test -v", "[ -v", "test -R", "[ ! -v", "test -n x -a -v"):
        close = " ]" if tester.startswith("[") else ""
        for sub in ("'a[$(rm x)]'", "'a[`rm x`]'", "\"a[\\$(rm x)]\"", "'x[$(rm -rf y)+1]'"):
            probes.append(Probe(f"{tester} {sub}{close}", "read_only", "test-v-subscript"))
            probes.append(Probe(f"{tester} {sub}{close}", "deny", "test-v-subscript"))
    everyday += [Everyday(c, "read_only", "find-test") for c in (
        "find . -name '*.py'", "find -- . -name x", "find -L . -type f", "test -f notes.txt", "[ -d data ]",
        "test -v HOME", "[ -n x ]", "test -e data/a.csv",
    )]

    # 4 runners deny rules see through
    for runner in RUNNERS:
        probes += [Probe(f"{runner} rm -rf x", "deny", "runners"), Probe(f"{runner} /bin/rm x", "deny", "runners")]
    for runner in SCRIPT_RUNNERS:
        probes += [Probe(f"{runner} 'rm -rf x'", "deny", "runners"), Probe(f"{runner}='rm x'", "deny", "runners")]
    for runner, tail in PROGRAM_RUNNERS:
        probes += [Probe(f"{runner} /bin/rm{tail}", "deny", "runners"),
                   Probe(f"{runner.replace(' -x', ' -x/bin/rm') if ' -x' in runner else runner + '=/bin/rm'}{tail}",
                         "deny", "runners")]
    everyday += [Everyday(f"{runner} pytest -q", "not_denied", "runners") for runner in RUNNERS[:8]]
    everyday += [Everyday("nix-shell --run 'python3 x.py'", "not_denied", "runners")]

    # 5 protected places (safety), written in ways that are not read-only and ways that are
    for path in PROTECTED_EXAMPLES + PATH_EXAMPLES:
        for command in (f"echo x > {path}", f"cp payload {path}", f"tee -a {path} < /dev/null", f"ln -sf /tmp/x {path}"):
            probes.append(Probe(command, "safety", "protected-paths"))
    everyday += [Everyday(f"cp payload {p}", "bypass_allowed", "protected-paths") for p in NOT_PROTECTED]
    everyday += [Everyday(c, "read_only", "protected-paths") for c in ("ls .ssh", "du -sh .git", "ls -la",
                                                                      "grep -r TODO --exclude-dir=.git .")]

    # 6 Read(...) deny rules for read-only shell commands
    for command in ("cat secrets/k", "head -n1 secrets/k", "grep -r x secrets/", "grep -rn x secrets", "cd secrets && cat k",
                    "wc -c < secrets/k", "cat ./data/../secrets/k", "cat link_to_secrets/k", "cat s{ecrets,x}/k",
                    "cat secr*/k", "cat secrets/*", "sort secrets/k", "rg x secrets", "cd data && cat ../secrets/k",
                    "diff secrets/k notes.txt", "cat < secrets/k", "tail secrets/./k", "cat $(echo secrets/k)"):
        probes.append(Probe(command, "read_deny", "read-deny-rules"))
    everyday += [Everyday(c, "read_allowed", "read-deny-rules") for c in (
        "cat data/a.csv", "ls data", "grep -r x data", "cd data && cat a.csv", "wc -l notes.txt", "head data/a.csv",
    )]

    # 7 git in a directory whose configuration is not the working directory's repository
    for command in ("git -C other status", "git -C other log", "cd other && git status", "cd other && git log -1",
                    "git --git-dir=other/.git log", "git --git-dir other/.git status", "git --work-tree=other status",
                    "GIT_DIR=other/.git git status", "git -C data -C ../other status", "cd other/sub && git diff",
                    "git -C /tmp status", "git -C ~ status", "cd data && git -C ../other status"):
        probes.append(Probe(command, "read_only", "git-foreign-repository"))
    everyday += [Everyday(c, "read_only", "git-own-repository") for c in (
        "git status", "git log -1", "git -C . status", "git -C data log", "cd data && git status", "git diff --stat",
    )]
    return probes, everyday


def make_project(root: Path, home: Path) -> Path:
    """A working directory for the families: a git repository with data, secrets, another
    repository beside it and links (``~`` is ``home``; ``~/.local/bin`` precedes /usr/bin)."""
    for sub in ("data", "secrets", ".git", "other/.git", "other/sub", ".toolagent"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "data" / "a.csv").write_text("x\n")
    (root / "notes.txt").write_text("n\n")
    (root / "secrets" / "k").write_text("k\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / "other" / ".git" / "config").write_text("[core]\n")
    if not (root / "link_to_secrets").exists():
        (root / "link_to_secrets").symlink_to(root / "secrets")
    for sub in (".ssh", ".local/bin", ".config"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    return Path(os.path.realpath(root))


# --- judging ------------------------------------------------------------------------------------------

async def decide_command(project: Path, command: str, **rules: object):  # type: ignore[no-untyped-def]
    from jupyter_toolagent.core.tool import ToolOptions, ToolPool, ToolUseContext
    from jupyter_toolagent.permissions import PermissionContext, RuleBasedPermissions
    from jupyter_toolagent.permissions.engine import decide_input
    from jupyter_toolagent.tools import Bash

    perms = PermissionContext(cwd=project, **rules)  # type: ignore[arg-type]
    ctx = ToolUseContext(tools=ToolPool([Bash()]), can_use_tool=RuleBasedPermissions(None, interactive=False),
                         permissions=perms, options=ToolOptions(cwd=project))
    return await decide_input(Bash(), {"command": command}, ctx)


async def gets_through(project: Path, probe: Probe) -> list[str]:
    """What got through for ``probe`` (empty: nothing)."""
    from jupyter_toolagent.permissions import is_read_only_command

    found: list[str] = []
    command = probe.command
    if probe.kind == "deny":
        for mode in ("default", "bypassPermissions", "dontAsk"):
            d = await decide_command(project, command, mode=mode, deny=("Bash(rm:*)",))
            if d.behavior == "allow":
                found.append(f"{mode}: allowed ({d.decided_by})")
        first = command.split()[0]
        if first.replace("-", "").replace("_", "").isalnum():
            d = await decide_command(project, command, allow=(f"Bash({first}:*)",), deny=("Bash(rm:*)",))
            if d.behavior == "allow":
                found.append(f"with Bash({first}:*) allowed: allowed")
    elif probe.kind == "read_only":
        if is_read_only_command(command, str(project)):
            found.append("classified read-only")
        d = await decide_command(project, command)
        if d.behavior == "allow":
            found.append(f"auto-allowed ({d.decided_by})")
        d = await decide_command(project, command, mode="plan")
        if d.behavior != "deny":
            found.append(f"plan: {d.behavior}")
    elif probe.kind == "safety":
        for rules in ({"mode": "bypassPermissions"}, {"allow": ("Bash",)}):
            d = await decide_command(project, command, **rules)
            if d.behavior != "ask":
                found.append(f"{rules}: {d.behavior} ({d.decided_by})")
    elif probe.kind == "read_deny":
        d = await decide_command(project, command, mode="bypassPermissions", deny=(SECRETS_RULE,))
        if d.behavior == "allow":
            found.append(f"bypassPermissions: allowed ({d.decided_by})")
        d = await decide_command(project, command, deny=(SECRETS_RULE,))
        if d.behavior == "allow":
            found.append(f"default: allowed ({d.decided_by})")
    else:
        raise AssertionError(probe.kind)
    return found


async def falsely_refused(project: Path, case: Everyday) -> str | None:
    """Why an everyday command lost its behaviour (None: it kept it)."""
    if case.expect == "read_only":
        d = await decide_command(project, case.command)
        return None if d.behavior == "allow" else f"{d.behavior} ({d.decided_by}): {d.message}"
    if case.expect == "not_denied":
        d = await decide_command(project, case.command, deny=("Bash(rm:*)",))
        return None if d.behavior != "deny" else f"denied: {d.message}"
    if case.expect == "bypass_allowed":
        d = await decide_command(project, case.command, mode="bypassPermissions")
        return None if d.behavior == "allow" else f"{d.behavior} ({d.decided_by}): {d.message}"
    if case.expect == "read_allowed":
        d = await decide_command(project, case.command, deny=(SECRETS_RULE,))
        return None if d.behavior == "allow" else f"{d.behavior} ({d.decided_by}): {d.message}"
    raise AssertionError(case.expect)


def _main() -> None:  # the before/after measurement
    import asyncio
    import collections
    import tempfile

    async def run() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            home.mkdir()
            os.environ["HOME"] = str(home)
            os.environ["PATH"] = f"{home}/.local/bin:/usr/bin:/bin"
            project = make_project(Path(tmp) / "project", home)
            probes, everyday = families()
            bypass: collections.Counter[str] = collections.Counter()
            total: collections.Counter[str] = collections.Counter()
            for probe in probes:
                total[probe.family] += 1
                if await gets_through(project, probe):
                    bypass[probe.family] += 1
            false_asks: collections.Counter[str] = collections.Counter()
            ordinary: collections.Counter[str] = collections.Counter()
            for case in everyday:
                ordinary[case.family] += 1
                if await falsely_refused(project, case) is not None:
                    false_asks[case.family] += 1
            for family in total:
                print(f"{family:34s} bypasses {bypass[family]:4d} / {total[family]}")
            for family in ordinary:
                print(f"{family:34s} false asks {false_asks[family]:3d} / {ordinary[family]}")
            print(f"TOTAL bypasses {sum(bypass.values())} / {len(probes)}; "
                  f"false asks {sum(false_asks.values())} / {len(everyday)}")

    asyncio.run(run())


if __name__ == "__main__":
    _main()
