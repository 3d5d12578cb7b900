"""Targets that declare ``inputs=agent-stored`` (contract §7): each has a flaw only on a shape a
correct agent never stores, or a real flaw on a shape it does store, to show the declaration
removes the first kind of flag and keeps the second."""

from __future__ import annotations

from typing import Any, ClassVar

from ctxmodel.targets import reference as ref
from tests.targets.broken_normalize import ResultsSplit
from tests.targets.broken_ops import DanglingParentsHide
from tests.targets.variant_reference import Params, Reference

Msg = dict[str, Any]
STORED: dict[str, str] = {**ref.REFERENCE_POLICIES, "inputs": "agent-stored"}


def _rename_repeats_within(history: list[Msg]) -> tuple[list[Msg], dict[str, str]]:
    """A repeated ``tool_use`` id within one message renamed out of the way (and back afterwards),
    as code that only ever meets the Task's deduplicated messages would leave it."""
    out: list[Msg] = []
    renamed: dict[str, str] = {}
    for k, msg in enumerate(history):
        content = msg.get("content")
        if msg.get("role") != "assistant" or not isinstance(content, list):
            out.append(msg)
            continue
        seen: set[str] = set()
        blocks = []
        for m, block in enumerate(content):
            tid = block.get("id") if isinstance(block, dict) and block.get("type") == "tool_use" else None
            if isinstance(tid, str) and tid in seen:
                alias = f"{tid}~repeat~{k}~{m}"
                renamed[alias] = tid
                block = {**block, "id": alias}
            elif isinstance(tid, str):
                seen.add(tid)
            blocks.append(block)
        out.append({**msg, "content": blocks})
    return out, renamed


def _restore(value: Any, renamed: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: (renamed.get(v, v) if k in ("id", "tool_use_id") and isinstance(v, str) else _restore(v, renamed))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, renamed) for v in value]
    return value


class KeepsRepeatsWithinMessage(Reference):
    """Leaves a tool_use id repeated within one message: the Task removed those before storing."""

    name = "stored-keeps-repeats-within-message"
    policies: ClassVar[dict[str, str]] = STORED

    def normalize(self, params: Params) -> Params:
        history, renamed = _rename_repeats_within(params["messages"])
        out = super().normalize({**params, "messages": history})["messages"]
        return {"messages": _restore(out, renamed)}


class DanglingHidesStored(DanglingParentsHide):
    """Hides a message whose marker is gone: a rewind strips such tags before anything reads them."""

    name = "stored-dangling-parents-hide"
    policies: ClassVar[dict[str, str]] = STORED


class ResultsSplitStored(ResultsSplit):
    """Leaves results split by an image (a shape agents do store): still a bug when declared."""

    name = "stored-results-split"
    policies: ClassVar[dict[str, str]] = STORED


class ReferenceStored(Reference):
    """The reference, declaring the agent-stored space: a correct target passes there too."""

    name = "stored-reference"
    policies: ClassVar[dict[str, str]] = STORED
