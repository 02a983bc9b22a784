"""visible(): every invisible or reordering character of manifest text is shown, never obeyed."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st
from text_structure import HIDDEN, hidden

import robot_md_mcp as rmm


def test_every_code_point_of_the_hidden_categories_is_shown_and_no_other() -> None:
    """All of Unicode at once (one call: a code point's form never depends on its neighbours here)."""
    chars = [chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code <= 0xDFFF]
    expected = [
        c if c in "\n\t" or unicodedata.category(c) not in HIDDEN else f"<U+{ord(c):04X}>" for c in chars
    ]
    shown = rmm.visible("".join(chars))
    if shown != "".join(expected):  # the first code point shown wrongly
        at = next(i for i, c in enumerate(chars) if rmm.visible(c) != expected[i])
        raise AssertionError(hex(ord(chars[at])))


@given(st.text())
def test_visible_text_holds_no_hidden_character_but_newlines_and_tabs(text: str) -> None:
    shown = rmm.visible(text)
    assert hidden(shown) == []
    assert rmm.visible(shown) == shown


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON_VALUES, st.sampled_from([None, 2]))
def test_json_text_is_the_same_value_with_nothing_hidden(value: object, indent: int | None) -> None:
    """The JSON views and tool results: any JSON reader gets the value back, and the text shows
    every invisible character as a \\u escape (the structure's newlines aside)."""
    import json

    text = rmm.json_text(value, indent)
    assert json.loads(text) == value
    assert hidden(text, allowed="\n") == []
