"""Tools the agent can call, and the narrowing every tool applies to its untrusted input."""

from collections.abc import Callable
from dataclasses import dataclass, field

from .json_form import JSON
from .session import record


@dataclass(frozen=True)
class Tool:
    """A named function the model may call; `run` gets the call's `input` and returns text.

    `run` gets a deep copy (a tool may change it; the recorded call stays as it was).
    `parameters` is the JSON schema a live model is shown for the input (default: any object).
    """

    name: str
    description: str
    run: Callable[[JSON], str]
    parameters: dict[str, JSON] = field(default_factory=lambda: {"type": "object"}, hash=False)


# The chapter's `asObject()` is the same narrowing as session's `record()`: one definition.
# Model output is untrusted JSON: narrow the structure first, then read the fields.
as_object = record
