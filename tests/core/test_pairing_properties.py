"""Properties of check / normalize / repair over many generated transcripts (SPEC §6).

- any transcript, however broken, passes `check_pairing` once repaired; repairing again
  changes nothing; no top-level text is lost or reordered; thinking blocks survive byte for byte;
- a valid transcript passes the check and comes back from repair unchanged;
- a valid transcript damaged the ways real sessions get damaged (a result dropped, duplicated,
  placed after text, moved to a later message, results reordered) is repaired, and a result
  that was only misplaced is kept rather than replaced by a placeholder;
- normalize → repair → normalize always yields a request the API accepts;
- both functions scale linearly, and the modules import with the standard library alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_toolagent.core import pairing as pairing_module
from jupyter_toolagent.core.pairing import (
    MISSING_RESULT_TEXT,
    check_pairing,
    normalize_messages_for_api,
    repair_pairing,
)
from jupyter_toolagent.core.pairing.repair import EMPTIED_MESSAGE_TEXT

PROPERTY_SETTINGS = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

Message = dict[str, Any]

# --- strategies -------------------------------------------------------------------------------
IDS = st.sampled_from(["toolu_a", "toolu_b", "toolu_c", "toolu_d", "toolu_a_dup1"])
WORDS = st.text(alphabet="abcxyz ", min_size=1, max_size=6)

text_block = st.builds(lambda t: {"type": "text", "text": t}, WORDS)
tool_use_block = st.builds(lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {"q": 1}},
                           IDS, st.sampled_from(["Read", "Grep"]))
result_content = st.one_of(WORDS, st.lists(text_block, min_size=1, max_size=2))
tool_result_block = st.builds(
    lambda i, c, e: {"type": "tool_result", "tool_use_id": i, "content": c, **({"is_error": True} if e else {})},
    IDS, result_content, st.booleans(),
)
thinking_block = st.one_of(
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "c2ln"}, WORDS),
    # unusual key order: must survive exactly as written
    st.builds(lambda t: {"signature": "c2ln", "thinking": t, "type": "thinking"}, WORDS),
    st.builds(lambda t: {"type": "redacted_thinking", "data": t}, WORDS),
)
assistant_message = st.builds(
    lambda c: {"role": "assistant", "content": c},
    st.one_of(WORDS, st.lists(st.one_of(text_block, tool_use_block, thinking_block), min_size=1, max_size=5)),
)
user_message = st.builds(
    lambda c: {"role": "user", "content": c},
    st.one_of(WORDS, st.lists(st.one_of(text_block, tool_result_block), min_size=1, max_size=5)),
)
any_transcript = st.lists(st.one_of(user_message, assistant_message), min_size=0, max_size=8)


@st.composite
def valid_transcript(draw: st.DrawFn) -> list[Message]:
    """A conversation as the runtime writes it: every tool_use answered at the start of the next
    user message (results in any order), unique ids, thinking first."""
    counter = iter(range(10_000))
    messages: list[Message] = [{"role": "user", "content": [{"type": "text", "text": draw(WORDS)}]}]
    for _ in range(draw(st.integers(0, 4))):
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            blocks.append(draw(thinking_block))
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(WORDS)})
        ids = [f"toolu_{next(counter):03d}" for _ in range(draw(st.integers(1, 4)))]
        blocks += [{"type": "tool_use", "id": i, "name": "Read", "input": {"path": i}} for i in ids]
        messages.append({"role": "assistant", "content": blocks})
        results = [{"type": "tool_result", "tool_use_id": i, "content": f"out {i}"} for i in draw(st.permutations(ids))]
        if draw(st.booleans()):
            results.append({"type": "text", "text": draw(WORDS)})
        messages.append({"role": "user", "content": results})
    if draw(st.booleans()):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": draw(WORDS)}]})
    return messages


# --- helpers ----------------------------------------------------------------------------------
def blocks_of(message: Message) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def top_level_texts(messages: list[Message]) -> list[str]:
    return [
        b["text"] for m in messages for b in blocks_of(m)
        if b.get("type") == "text" and b["text"] != EMPTIED_MESSAGE_TEXT
    ]


def thinking_bytes(messages: list[Message]) -> list[bytes]:
    return [
        json.dumps(b).encode() for m in messages for b in blocks_of(m)
        if b.get("type") in {"thinking", "redacted_thinking"}
    ]


def tool_use_count(messages: list[Message]) -> int:
    return sum(1 for m in messages for b in blocks_of(m) if b.get("type") == "tool_use")


def assert_repair_properties(transcript: list[Message]) -> list[Message]:
    report = repair_pairing(transcript)
    assert check_pairing(report.messages) == [], report.summary()
    again = repair_pairing(report.messages)
    assert again.changed is False and again.messages == report.messages, again.summary()
    assert top_level_texts(report.messages) == top_level_texts(transcript)
    assert thinking_bytes(report.messages) == thinking_bytes(transcript)
    assert tool_use_count(report.messages) == tool_use_count(transcript)  # calls are never dropped
    assert report.changed == bool(check_pairing(transcript))  # changed exactly when it was broken
    return report.messages


# --- properties -------------------------------------------------------------------------------
@PROPERTY_SETTINGS
@given(any_transcript)
def test_any_transcript_is_repaired_to_a_valid_one(transcript: list[Message]) -> None:
    snapshot = json.dumps(transcript)
    assert_repair_properties(transcript)
    assert json.dumps(transcript) == snapshot  # the input is never modified
    if not check_pairing(transcript):
        assert repair_pairing(transcript).changed is False


@PROPERTY_SETTINGS
@given(valid_transcript())
def test_valid_transcripts_pass_and_are_left_unchanged(transcript: list[Message]) -> None:
    assert check_pairing(transcript) == []
    report = repair_pairing(transcript)
    assert report.changed is False
    assert report.messages == transcript
    assert normalize_messages_for_api(transcript) == transcript


def _results_messages(transcript: list[Message]) -> list[int]:
    return [i for i, m in enumerate(transcript)
            if m["role"] == "user" and any(b.get("type") == "tool_result" for b in blocks_of(m))]


def _drop(m: list[Message], i: int, k: int) -> None:
    del m[i]["content"][k]


def _duplicate(m: list[Message], i: int, k: int) -> None:
    m[i]["content"].insert(k + 1, dict(m[i]["content"][k]))


def _after_text(m: list[Message], i: int, k: int) -> None:
    m[i]["content"].insert(0, {"type": "text", "text": "typed before the results"})


def _to_later_message(m: list[Message], i: int, k: int) -> None:
    moved = m[i]["content"].pop(k)
    m.insert(i + 1, {"role": "user", "content": [{"type": "text", "text": "later"}, moved]})


def _reverse_results(m: list[Message], i: int, k: int) -> None:
    results = [b for b in m[i]["content"] if b.get("type") == "tool_result"]
    others = [b for b in m[i]["content"] if b.get("type") != "tool_result"]
    m[i]["content"] = others[:1] + results[::-1] + others[1:]


DAMAGE: dict[str, Callable[[list[Message], int, int], None]] = {
    "drop": _drop,
    "duplicate": _duplicate,
    "after_text": _after_text,
    "to_later_message": _to_later_message,
    "reverse": _reverse_results,
}


@PROPERTY_SETTINGS
@given(valid_transcript(), st.sampled_from(sorted(DAMAGE)), st.data())
def test_damaged_valid_transcripts_are_repaired(transcript: list[Message], damage: str, data: st.DataObject) -> None:
    targets = _results_messages(transcript)
    if not targets:
        return
    damaged = json.loads(json.dumps(transcript))
    i = data.draw(st.sampled_from(targets))
    results = [k for k, b in enumerate(damaged[i]["content"]) if b.get("type") == "tool_result"]
    k = data.draw(st.sampled_from(results))
    DAMAGE[damage](damaged, i, k)
    fixed = assert_repair_properties(damaged)
    placeholders = sum(1 for m in fixed for b in blocks_of(m)
                       if b.get("type") == "tool_result" and b.get("content") == MISSING_RESULT_TEXT)
    # only a result that is really gone is replaced by a placeholder
    assert placeholders == (1 if damage == "drop" else 0)
    real = {b["tool_use_id"]: b["content"] for m in fixed for b in blocks_of(m) if b.get("type") == "tool_result"}
    for original_id, content in ((b["tool_use_id"], b["content"]) for m in transcript for b in blocks_of(m)
                                 if b.get("type") == "tool_result"):
        if damage != "drop" or real.get(original_id) != MISSING_RESULT_TEXT:
            assert real[original_id] == content


@PROPERTY_SETTINGS
@given(any_transcript)
def test_normalize_then_repair_then_normalize_is_accepted_by_the_api(transcript: list[Message]) -> None:
    sent = normalize_messages_for_api(repair_pairing(normalize_messages_for_api(transcript)).messages)
    assert check_pairing(sent) == []
    assert thinking_bytes(sent) == thinking_bytes(transcript)


# --- scale and imports ------------------------------------------------------------------------
def _long_broken_transcript(turns: int) -> list[Message]:
    messages: list[Message] = [{"role": "user", "content": "start"}]
    for n in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"turn {n}"},
            {"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}},
            {"type": "tool_use", "id": f"toolu_{n}b", "name": "Read", "input": {}},
        ]})
        results = [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "x"}]
        if n % 3 == 0:
            results.insert(0, {"type": "text", "text": "early"})  # every third turn is broken
        else:
            results.append({"type": "tool_result", "tool_use_id": f"toolu_{n}b", "content": "y"})
        messages.append({"role": "user", "content": results})
    return messages


def _elapsed(work: Callable[[], Any]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def test_check_and_repair_scale_linearly() -> None:
    small, large = _long_broken_transcript(1_000), _long_broken_transcript(10_000)

    def both(messages: list[Message]) -> Callable[[], None]:
        def work() -> None:
            assert check_pairing(messages)
            assert check_pairing(repair_pairing(messages).messages) == []
        return work

    # interleaved, best of five: a burst of load on a shared machine hits both sizes alike
    small_times, large_times = [], []
    for _ in range(5):
        small_times.append(_elapsed(both(small)))
        large_times.append(_elapsed(both(large)))
    ratio = min(large_times) / min(small_times)
    print(f"\ncheck+repair: 10k turns / 1k turns time ratio = {ratio:.1f} (linear ≈ 10)")
    assert ratio < 25


def test_the_pairing_modules_need_only_the_standard_library(tmp_path: Path) -> None:
    package = tmp_path / "standalone_pairing"
    package.mkdir()
    source = Path(pairing_module.__file__).parent
    for module in source.glob("*.py"):  # every module of the package, so a new one is covered too
        shutil.copy(module, package / module.name)
    script = (
        "import sys\n"
        "from standalone_pairing import check_pairing, repair_pairing, normalize_messages_for_api\n"
        "m = [{'role': 'user', 'content': 'go'},"
        " {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 't', 'name': 'X', 'input': {}}]}]\n"
        "assert check_pairing(normalize_messages_for_api(m))[0].kind == 'missing_result'\n"
        "assert check_pairing(repair_pairing(m).messages) == []\n"
        "assert 'jupyter_toolagent' not in sys.modules and 'pydantic' not in sys.modules\n"
        "print('standalone ok')\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "standalone ok"
