"""argparse types shared by the CLI's subcommands (`chat` and `teaching.demo` too)."""

import argparse
from collections.abc import Callable
from typing import TypeVar

from . import cli_text as text

Number = TypeVar("Number", int, float)


def positive(convert: Callable[[str], Number], kind: str) -> Callable[[str], Number]:
    """A type: `convert(value)` when it is a positive `kind`, else a usage error (exit 2)."""

    def parse(value: str) -> Number:
        try:
            number = convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(text.not_a(kind, repr(value))) from None
        if not number > 0:  # `not >` also refuses NaN
            raise argparse.ArgumentTypeError(text.not_positive(value))
        return number

    return parse


positive_int = positive(int, text.INTEGER)  # a budget: --max-chars
positive_float = positive(float, text.NUMBER)  # a time: --timeout
