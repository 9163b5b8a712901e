"""``notebooks/permissions_and_hooks.ipynb``: rules decide (and say which rule), compound commands
are split and judged part by part, modes map asks, hooks deny finally but never beat a deny rule,
a settings file is read for a new session, session rules are listed and removed, and the lesson
leaves no hook, directory or working-directory change behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_support import ExecutedLesson, execute_lesson, probe

pytestmark = pytest.mark.kernel

PROBES = [
    probe("[len(default_registry), os.getcwd(), str(lesson_dir), os.path.exists(lesson_dir)]",
          setup="import os\nfrom jupyter_toolagent.hooks import default_registry"),
    probe("current_session().permissions.session_rules"),
]


@pytest.fixture(scope="module")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> ExecutedLesson:
    return execute_lesson("permissions_and_hooks", tmp_path_factory.mktemp("permissions_and_hooks"), probes=PROBES)


def decision_lines(lesson: ExecutedLesson, tag: str) -> list[str]:
    return [" ".join(line.split()) for line in lesson.text(tag).splitlines() if " -> " in line]


def test_runs_offline_without_errors_in_time(lesson: ExecutedLesson) -> None:
    assert lesson.errors() == []
    assert lesson.seconds < 30, lesson.seconds


def test_an_allow_rule_covers_what_the_read_only_check_does_not(lesson: ExecutedLesson) -> None:
    assert decision_lines(lesson, "rule-decisions") == [
        "'git log --oneline -3' -> allow by read_only",
        "'git log --oneline -3 --output=history.txt' -> allow by rule Bash(git log:*)",
    ]


def test_compound_commands_are_split_and_any_denied_part_denies_all(lesson: ExecutedLesson) -> None:
    split = lesson.text("split")
    assert "parts=['git log --oneline -1', 'git tag v1'] read-only=False" in split
    assert "parts=[\"echo 'a && b'\", 'wc -c'] read-only=True" in split  # the quoted && is not an operator
    assert "parts=['ls', 'cat notes.txt > copy.txt'] read-only=False" in split
    run = lesson.text("compound-run")
    assert "Bash was denied: the command `ls && rm notes.txt` matches the deny rule `Bash(rm:*)` (flag)." in run
    assert ("Bash was not run: parts of the command `git log --oneline -1 && git tag v1` are not allowed by any "
            "rule: `git tag v1`. It needs approval and nobody can approve in this run. To allow it, add "
            "`--allow 'Bash(git tag:*)'`.") in run
    assert decision_lines(lesson, "compound-decisions") == [
        "'ls && rm notes.txt' -> deny by rule Bash(rm:*)",
        "'git log --oneline -1 && git tag v1' -> deny by policy",
    ]
    assert "notes.txt still there: True" in lesson.text("compound-decisions")


def test_ask_beats_allow_and_modes_map_asks(lesson: ExecutedLesson) -> None:
    assert ("Bash was not run: the command `git log --oneline -3` matches the ask rule `Bash(git log:*)` (flag). "
            "It needs approval and nobody can approve in this run.") in lesson.text("ask-run")
    plan = lesson.text("plan-run")
    assert "command: git log --oneline -1\n  Allowed by read-only check" in plan
    assert ("plan mode only runs read-only tools: this Bash call has side effects, so it was not run.") in plan
    assert ("Bash was not run: the command `touch draft.txt` is not allowed by any rule. Mode dontAsk denies every "
            "call that would need approval. To allow it, add `--allow 'Bash(touch draft.txt)'`.") in lesson.text("dontask-run")


def test_hook_deny_is_final_and_hook_allow_does_not_beat_a_deny_rule(lesson: ExecutedLesson) -> None:
    assert decision_lines(lesson, "hooks-decisions") == [
        "'touch hooked.txt' -> allow by hook",
        "'git tag v3' -> deny by hook",
        "'ls && rm notes.txt' -> deny by rule Bash(rm:*)",
    ]
    run = lesson.text("hooks-run")
    assert "error result:\n    Tags are made by the release script, not by the agent." in run
    assert "hooked.txt created: True | notes.txt still there: True" in lesson.text("hooks-decisions")
    assert lesson.text("unhook").strip() == "hooks left: 0"


def test_settings_file_rules_apply_to_a_new_session(lesson: ExecutedLesson) -> None:
    assert decision_lines(lesson, "settings-decisions") == [
        "'touch from-settings.txt' -> allow by rule Bash(touch:*)",
        "'git tag v4' -> deny by rule Bash(git tag:*)",
    ]
    assert "matches the deny rule `Bash(git tag:*)` (settings)." in lesson.text("settings-run")
    described = lesson.text("settings-decisions")
    assert "/.toolagent/settings.json" in described and "Bash(touch:*)  [settings]" in described


def test_session_rules_are_listed_and_removed(lesson: ExecutedLesson) -> None:
    assert lesson.text("rules").strip().splitlines() == [
        "session rules of 'project' (added by \"Always allow\"):", "  allow Bash(touch:*)"]
    assert lesson.text("rules-remove").strip() == "removed session rule 'Bash(touch:*)'"
    assert lesson.probes[1] == []


def test_the_lesson_cleans_up(lesson: ExecutedLesson) -> None:
    hooks, cwd, lesson_dir, exists = lesson.probes[0]
    assert hooks == 0
    assert Path(cwd) == lesson.workdir.resolve()
    assert Path(lesson_dir).name.startswith("toolagent-permissions-") and not exists
