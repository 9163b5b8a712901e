"""The issue-14 bypass classes, each a generated family (`classifier_families`), decided by the
real engine for the real ``Bash`` tool; beside each family, everyday commands that must keep
their behaviour. Commands are only classified, never run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from classifier_families import Everyday, Probe, falsely_refused, families, gets_through, make_project
from suite_counts import report

PROBES, EVERYDAY = families()
_SEEN = {"probes": 0, "everyday": 0}


@pytest.fixture
def family_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home}/.local/bin:/usr/bin:/bin")
    return make_project(tmp_path / "project", home)


def test_the_families_are_large() -> None:
    kinds = {p.family for p in PROBES}
    assert len(PROBES) >= 1000 and len(kinds) >= 12
    assert len({p.command + p.kind for p in PROBES}) == len(PROBES), "duplicates"
    report("r4_issue14_family_probes", len(PROBES), f"generated hostile commands in {len(kinds)} families")
    report("r4_issue14_everyday", len(EVERYDAY), "everyday counterparts that must keep their behaviour")


@pytest.mark.asyncio
@pytest.mark.parametrize("probe", PROBES, ids=str)
async def test_probe_gets_nowhere(probe: Probe, family_project: Path) -> None:
    _SEEN["probes"] += 1
    report("r4_issue14_family_bypasses_checked", _SEEN["probes"], "each must get nowhere")
    assert await gets_through(family_project, probe) == []


@pytest.mark.asyncio
@pytest.mark.parametrize("case", EVERYDAY, ids=str)
async def test_everyday_command_keeps_its_behaviour(case: Everyday, family_project: Path) -> None:
    _SEEN["everyday"] += 1
    report("r4_issue14_everyday_checked", _SEEN["everyday"], "each must keep its behaviour (no false ask)")
    assert await falsely_refused(family_project, case) is None


def test_the_project_has_what_the_families_need(family_project: Path) -> None:
    assert (family_project / "other" / ".git").is_dir() and (family_project / "secrets" / "k").is_file()
    assert os.path.realpath(family_project / "link_to_secrets") == str(family_project / "secrets")
