"""Tools the agent can call, and the narrowing every tool applies to its untrusted input."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .json_form import JSON


def _any_object() -> dict[str, JSON]:
    return {"type": "object"}


@dataclass(frozen=True)
class Tool:
    """A named function the model may call; `run` gets the call's `input` and returns text.

    `parameters` is the JSON schema a live model is shown for the input (default: any object).
    """

    name: str
    description: str
    run: Callable[[JSON], str]
    parameters: dict[str, JSON] = field(default_factory=_any_object, hash=False)


def as_object(value: JSON) -> dict[str, JSON] | None:
    """The chapter's `asObject()`: the input as a JSON object, or `None` if it is not one.

    Model output is untrusted JSON: narrow the structure first, then read the fields.
    """
    return value if isinstance(value, dict) else None
