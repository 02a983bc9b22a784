"""visible(): every invisible or reordering character of manifest text is shown, never obeyed."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

import robot_md_mcp as rmm

HIDDEN = ("Cc", "Cf", "Zl", "Zp")


def test_every_code_point_of_the_hidden_categories_is_shown_and_no_other() -> None:
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if 0xD800 <= code <= 0xDFFF:
            continue
        shown = rmm.visible(char)
        if char in "\n\t" or unicodedata.category(char) not in HIDDEN:
            assert shown == char, hex(code)
        else:
            assert shown == f"<U+{code:04X}>", hex(code)


@given(st.text())
def test_visible_text_holds_no_hidden_character_but_newlines_and_tabs(text: str) -> None:
    shown = rmm.visible(text)
    assert all(c in "\n\t" or unicodedata.category(c) not in HIDDEN for c in shown)
    assert rmm.visible(shown) == shown
