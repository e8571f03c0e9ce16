"""mini_agent: chapter 34's session on disk (complete, auditable) and the context for the model
(trimmed to a character budget), in Python: two states, two pipelines, joined only by `run_agent`."""

from .agent import run_agent
from .context import ContextBudgetError, context_units, estimate_context_chars, trim_context
from .model_client import ScriptedClient
from .session import (
    AssistantMessage,
    Message,
    SessionFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
    parse_session_message,
    to_record,
)
from .tools import Tool

__all__ = [
    "AssistantMessage",
    "ContextBudgetError",
    "Message",
    "ScriptedClient",
    "SessionFormatError",
    "Tool",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "append_session",
    "context_units",
    "estimate_context_chars",
    "load_session",
    "parse_session_message",
    "run_agent",
    "to_record",
    "trim_context",
]
