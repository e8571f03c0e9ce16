"""style: the views' HTML escaping."""

from __future__ import annotations

from teaching.style import visible_html


def test_visible_html_escapes_hidden_characters_and_html() -> None:
    assert visible_html("<\u202e>\n&'\"") == "&lt;\\u202e&gt;\n&amp;&#x27;&quot;"
