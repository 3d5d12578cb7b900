"""ctxmodel: a reference model and property gate for LLM-agent conversation-history code."""

from ctxmodel.codec import dump, dumps, load, loads, read
from ctxmodel.errors import CtxmodelError, HistoryError
from ctxmodel.model import History, Message

__all__ = [
    "CtxmodelError",
    "History",
    "HistoryError",
    "Message",
    "dump",
    "dumps",
    "load",
    "loads",
    "read",
]

__version__ = "0.1.0"
