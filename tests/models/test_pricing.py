"""Cost from usage with genai-prices, pinned against the package's own calculation."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from jupyter_toolagent.core.usage import Usage
from jupyter_toolagent.models.pricing import Cost, estimate_cost, format_cost, price_unknown_reason, price_source

USAGE = {"input_tokens": 1200, "output_tokens": 800, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 20000}


def model_price(model: str):  # noqa: ANN201
    from genai_prices import data_snapshot

    _, info = data_snapshot.get_snapshot().find_provider_model(model, None, "anthropic", None)
    return info.get_prices(datetime.now(tz=UTC))


def test_known_model_cost_parts_follow_the_price_table() -> None:
    prices = model_price("claude-haiku-4-5")
    cost = estimate_cost("claude-haiku-4-5", USAGE)
    assert cost is not None
    million = Decimal(1_000_000)
    assert cost.input_usd == prices.input_mtok * 1200 / million
    assert cost.output_usd == prices.output_mtok * 800 / million
    assert cost.cache_write_usd == prices.cache_write_mtok * 5000 / million
    assert cost.cache_read_usd == prices.cache_read_mtok * 20000 / million
    assert cost.total_usd == cost.input_usd + cost.output_usd + cost.cache_write_usd + cost.cache_read_usd > 0
    assert cost.source == price_source() and cost.source.startswith("genai-prices ")


@pytest.mark.parametrize("model", ["claude-haiku-4-5", "claude-sonnet-4-5", "claude-opus-4-1"])
def test_total_agrees_with_genai_prices_own_calculation(model: str) -> None:
    """Pins the low-level API we use (calc_unit_price, ModelPrice names) to the package's calc_price.

    genai-prices counts ``input_tokens`` as the whole input, cached parts included."""
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    theirs = calc_price(PriceUsage(input_tokens=1200 + 5000 + 20000, cache_write_tokens=5000,
                                   cache_read_tokens=20000, output_tokens=800), model, provider_id="anthropic")
    ours = estimate_cost(model, USAGE)
    assert ours is not None and ours.total_usd == theirs.total_price


def test_core_usage_is_accepted_and_costs_add_up() -> None:
    one = Usage(input_tokens=100, output_tokens=50, cache_creation_input_tokens=10, cache_read_input_tokens=1000, requests=1)
    cost = estimate_cost("claude-haiku-4-5", one)
    assert cost == estimate_cost("claude-haiku-4-5", {"input_tokens": 100, "output_tokens": 50,
                                                      "cache_creation_input_tokens": 10, "cache_read_input_tokens": 1000})
    both = estimate_cost("claude-haiku-4-5", one + one)
    assert both is not None and cost is not None
    assert both.total_usd == (cost + cost).total_usd == 2 * cost.total_usd
    assert (cost + cost).source == cost.source


def test_long_context_tier_uses_the_input_of_one_request() -> None:
    small = {"input_tokens": 150_000, "output_tokens": 0}
    big = {"input_tokens": 300_000, "output_tokens": 0}
    per_token_small = estimate_cost("claude-sonnet-4-5", small).input_usd / 150_000  # type: ignore[union-attr]
    per_token_big = estimate_cost("claude-sonnet-4-5", big).input_usd / 300_000  # type: ignore[union-attr]
    assert per_token_big > per_token_small  # above 200k input the tier price applies
    two_small = Usage(input_tokens=300_000, requests=2)
    assert estimate_cost("claude-sonnet-4-5", two_small).input_usd == 2 * estimate_cost("claude-sonnet-4-5", small).input_usd  # type: ignore[union-attr]


def test_unknown_model_has_no_cost_and_a_reason() -> None:
    assert estimate_cost("my-local-model-7b", USAGE) is None
    reason = price_unknown_reason("my-local-model-7b")
    assert reason == f"price unknown for model my-local-model-7b (not in {price_source()})"
    assert price_unknown_reason("claude-haiku-4-5") is None
    assert format_cost("my-local-model-7b", USAGE) == reason


def test_cost_text_names_the_parts_and_the_source() -> None:
    cost = Cost(input_usd=Decimal("0.0012"), output_usd=Decimal("0.004"), cache_write_usd=Decimal(0),
                cache_read_usd=Decimal("0.00002"), source="genai-prices 9.9")
    assert str(cost) == "~$0.0052 (input $0.0012, output $0.0040, cache read <$0.0001; genai-prices 9.9)"
    footer = format_cost("claude-haiku-4-5", Usage(input_tokens=1000, output_tokens=100, requests=1))
    assert footer == str(estimate_cost("claude-haiku-4-5", {"input_tokens": 1000, "output_tokens": 100}))
    assert footer.startswith("~$0.00") and footer.endswith(f"; {price_source()})")


def test_importing_models_loads_neither_genai_prices_nor_the_sdk() -> None:
    code = "import sys, jupyter_toolagent.models; print('genai_prices' in sys.modules, 'anthropic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "False"]
