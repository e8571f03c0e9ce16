"""load_session's fast line decoder must say exactly what json's decoder says, line by line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mini_agent import UserMessage, load_session
from mini_agent.session import _decode_line, _decoder

from .helpers import write_lines

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children)
    ),
    max_leaves=6,
)
spaces = st.sampled_from(["", " ", "\t", "  \t"])
tails = st.sampled_from(["", "x", "}", "]", ",1", " {}", "NaN", '"'])


def _outcome(decode: Callable[[str], object], line: str) -> tuple[str, object]:
    try:
        return "value", decode(line)
    except (ValueError, RecursionError) as err:
        return type(err).__name__, str(err)


@given(spaces, values, spaces, tails)
def test_fast_decoder_agrees_with_json_on_value_and_error(
    before: str, value: object, after: str, tail: str
) -> None:
    line = before + json.dumps(value) + after + tail
    assert _outcome(_decode_line, line) == _outcome(_decoder.decode, line)


@given(st.text(max_size=12))
def test_fast_decoder_agrees_with_json_on_any_text(line: str) -> None:
    assert _outcome(_decode_line, line) == _outcome(_decoder.decode, line)


def test_a_record_with_spaces_around_it_still_loads(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", '  {"role":"user","content":"x"}\t')
    assert load_session(path) == [UserMessage("x")]
