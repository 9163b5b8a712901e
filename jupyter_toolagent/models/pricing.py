"""What a run cost, from the token usage the API reports (SPEC §7.1: "usage and cost per run").

Prices come from `genai-prices`, a maintained price table, rather than a table copied here
that would silently go stale. The API reports four token counts and each has its own price:
``input_tokens`` (uncached input), ``cache_creation_input_tokens`` (written to the cache),
``cache_read_input_tokens`` (read from it) and ``output_tokens``; `Cost` keeps the four parts
apart so the footer can show where the money went, and Costs add up.

Each part is priced with ``genai_prices.types.calc_unit_price`` on the model's ``ModelPrice``
(``input_mtok``, ``output_mtok``, ``cache_write_mtok``, ``cache_read_mtok``). That is a
public but low-level corner of the package; ``tests/models/test_pricing.py`` pins it against
the package's own ``calc_price`` so an upgrade that changes it fails there, not in a footer.

Some models have long-context tiers chosen by the request's total input. A summed `Usage` of
several requests is priced with the *average* input per request for the tier choice; exact
tiers need one `estimate_cost` per request, added up.

``genai_prices`` is imported on the first lookup (about a second), not when this module is
imported: most runs ask for a price only when they finish.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Mapping

__all__ = ["Cost", "estimate_cost", "format_cost", "price_unknown_reason", "price_source"]

_PROVIDER = "anthropic"
_PER_MTOK = 1_000_000
_ZERO = Decimal(0)


@dataclass(frozen=True)
class Cost:
    """An estimated cost in USD, split by the kind of token it paid for."""

    input_usd: Decimal
    output_usd: Decimal
    cache_write_usd: Decimal
    cache_read_usd: Decimal
    source: str
    """Where the prices came from, e.g. ``"genai-prices 0.2.3"``."""

    @property
    def total_usd(self) -> Decimal:
        return self.input_usd + self.output_usd + self.cache_write_usd + self.cache_read_usd

    def __add__(self, other: "Cost") -> "Cost":
        if not isinstance(other, Cost):
            return NotImplemented
        source = self.source if self.source == other.source else f"{self.source}; {other.source}"
        return Cost(
            input_usd=self.input_usd + other.input_usd,
            output_usd=self.output_usd + other.output_usd,
            cache_write_usd=self.cache_write_usd + other.cache_write_usd,
            cache_read_usd=self.cache_read_usd + other.cache_read_usd,
            source=source,
        )

    def __str__(self) -> str:
        """``"~$0.0123 (input $0.0030, output $0.0090, cache read $0.0003; genai-prices 0.2.3)"``."""
        parts = [f"input {_usd(self.input_usd)}", f"output {_usd(self.output_usd)}"]
        if self.cache_write_usd:
            parts.append(f"cache write {_usd(self.cache_write_usd)}")
        if self.cache_read_usd:
            parts.append(f"cache read {_usd(self.cache_read_usd)}")
        return f"~{_usd(self.total_usd)} ({', '.join(parts)}; {self.source})"


def _usd(value: Decimal) -> str:
    if value == 0:
        return "$0"
    if value < Decimal("0.0001"):
        return "<$0.0001"
    return f"${value:.4f}"


def price_source() -> str:
    """The price table in use, as shown to the user (``"genai-prices <version>"``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"genai-prices {version('genai-prices')}"
    except PackageNotFoundError:
        return "genai-prices (not installed)"


@functools.lru_cache(maxsize=64)
def _model_info(model: str) -> Any:
    """The genai-prices model entry for ``model``, or None when the table does not know it."""
    try:
        from genai_prices import data_snapshot
    except ImportError:
        return None
    try:
        _, info = data_snapshot.get_snapshot().find_provider_model(model, None, _PROVIDER, None)
    except LookupError:
        return None
    return info


def price_unknown_reason(model: str) -> str | None:
    """Why no cost can be shown for ``model`` (None when its price is known)."""
    if _model_info(model) is not None:
        return None
    return f"price unknown for model {model} (not in {price_source()})"


def _counts(usage: Any) -> tuple[int, int, int, int, int]:
    """(input, output, cache write, cache read, requests) from a `Usage` or an API usage dict."""
    if isinstance(usage, Mapping):
        get = usage.get
    else:
        def get(key: str, default: Any = None) -> Any:
            return getattr(usage, key, default)
    return (
        int(get("input_tokens") or 0),
        int(get("output_tokens") or 0),
        int(get("cache_creation_input_tokens") or 0),
        int(get("cache_read_input_tokens") or 0),
        max(1, int(get("requests") or 1)),
    )


def estimate_cost(model: str, usage: Any) -> Cost | None:
    """The cost of ``usage`` (a `core.usage.Usage` or the API's usage dict) on ``model``.

    None when the price table does not know the model (`price_unknown_reason` says so).
    """
    info = _model_info(model)
    if info is None:
        return None
    from genai_prices.types import calc_unit_price

    prices = info.get_prices(datetime.now(tz=UTC))
    input_tokens, output_tokens, cache_write, cache_read, requests = _counts(usage)
    # Long-context tiers are chosen by one request's whole input (cached or not).
    tier_input = (input_tokens + cache_write + cache_read) // requests

    def part(price: Any, count: int) -> Decimal:
        return calc_unit_price(price, count, tier_input, _PER_MTOK) if count else _ZERO

    return Cost(
        input_usd=part(prices.input_mtok, input_tokens),
        output_usd=part(prices.output_mtok, output_tokens),
        cache_write_usd=part(prices.cache_write_mtok, cache_write),
        cache_read_usd=part(prices.cache_read_mtok, cache_read),
        source=price_source(),
    )


def format_cost(model: str, usage: Any) -> str:
    """The cost part of a run's footer line: `Cost`'s text, or why there is none."""
    cost = estimate_cost(model, usage)
    if cost is None:
        return price_unknown_reason(model) or "cost unknown"
    return str(cost)
