"""Argument types shared by the CLI's subcommands (those in `cli.py` and `chat`; the notebooks' `teaching.demo` uses them too)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from . import cli_text as text

Number = TypeVar("Number", int, float)


def positive(convert: Callable[[str], Number], kind: str) -> Callable[[str], Number]:
    """An argparse type: `convert(text)` when it is a positive number of `kind`, or the
    usage error (exit 2) saying what was wrong."""

    def parse(value_text: str) -> Number:
        try:
            value = convert(value_text)
        except ValueError:
            raise argparse.ArgumentTypeError(text.not_a(kind, repr(value_text))) from None
        if not value > 0:  # `not >` also refuses NaN
            raise argparse.ArgumentTypeError(text.not_positive(value_text))
        return value

    return parse


positive_int = positive(int, text.INTEGER)  # a budget: --max-chars
positive_float = positive(float, text.NUMBER)  # a time: --timeout
