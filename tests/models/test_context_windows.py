"""The model → context window table (SPEC §14): the maintained genai-prices table first, the
prefix fallback for ids it does not list."""

from __future__ import annotations

from genai_prices import data_snapshot

from jupyter_toolagent.models.anthropic import AnthropicModel
from jupyter_toolagent.models.context_windows import FALLBACK_PREFIXES, context_window_for


def test_every_anthropic_model_of_the_maintained_table_gets_its_window() -> None:
    provider = next(p for p in data_snapshot.get_snapshot().providers if p.id == "anthropic")
    listed = [m for m in provider.models if m.context_window]
    assert len(listed) >= 10
    for model in listed:
        assert context_window_for(model.id) == model.context_window, model.id


def test_ids_the_table_does_not_know_fall_back_to_the_longest_prefix() -> None:
    assert context_window_for("claude-sonnet-4-5-20991231-preview") == 200_000
    assert context_window_for("claude-opus-5-9-experimental") == FALLBACK_PREFIXES["claude-opus-5"]
    assert context_window_for("claude-3-7-sonnet-20250219") == 200_000
    for unknown in ("gpt-4o", "claude-load", "", "my-local-model"):
        assert context_window_for(unknown) is None


def test_the_anthropic_model_offers_its_window_to_the_core() -> None:
    assert AnthropicModel("claude-sonnet-5-5").context_window == 1_000_000
    assert AnthropicModel("claude-unknown-x").context_window is None
