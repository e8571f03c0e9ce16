"""Old names of `mini_agent.chapter.context` (the chapter's context.ts, transcribed), kept
only for bench/, which still imports `literal_trim` from here; nothing else should."""

from __future__ import annotations

from ..chapter.context import context_units as literal_units
from ..chapter.context import estimate_context_chars as literal_estimate
from ..chapter.context import trim_context as literal_trim

__all__ = ["literal_estimate", "literal_trim", "literal_units"]
