"""A result's text is a placeholder (repair.placeholders) as the list of texts says: one of
them inside a short text, whatever else it holds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from repair.model import SYNTHETIC_PREFIX, block_from_anthropic
from repair.placeholders import PLACEHOLDERS, is_placeholder

_part = st.one_of(
    st.sampled_from([p.upper() for p in PLACEHOLDERS] + list(PLACEHOLDERS)), st.text(max_size=40)
)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(parts=st.lists(_part, max_size=4), pad=st.integers(0, 320))
def test_a_placeholder_is_one_of_the_texts_inside_a_short_result(parts, pad):
    text = " ".join(parts) + "x" * pad
    block = block_from_anthropic({"type": "tool_result", "tool_use_id": "t", "content": text})
    low = text.strip().lower()
    said = any(p in low for p in PLACEHOLDERS) and len(low) < 300
    assert is_placeholder(block) == (
        said or low in ("aborted", "") or text.strip().startswith(SYNTHETIC_PREFIX)
    )
