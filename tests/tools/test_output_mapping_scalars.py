"""The scalar fast path of `map_return_value` writes exactly what ``json.dumps`` writes."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from jupyter_toolagent.tools.output_mapping import map_return_value


@given(st.one_of(st.booleans(), st.integers(), st.integers(min_value=-(10**400), max_value=10**400),
                 st.floats(allow_nan=False, allow_infinity=False)))
def test_a_plain_scalar_is_its_json_text(value: object) -> None:
    assert map_return_value(value) == json.dumps(value, ensure_ascii=False)


def test_non_finite_floats_are_still_written_as_text_json_can_hold() -> None:
    for value in (math.inf, -math.inf, math.nan):
        text = map_return_value(value)
        assert json.loads(text) == str(value)


def test_an_int_past_the_digit_limit_is_still_text() -> None:
    text = map_return_value(10**5000)
    assert isinstance(text, str) and text
