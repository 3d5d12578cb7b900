"""An independent implementation of normalize and effective, written from the contract, with the reference's policies.

Nothing in it calls ``ctxmodel.normalize`` or ``ctxmodel.visibility``: if the properties only passed
the reference because they mirror its code, this one would show it.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as
from tests.quality.zoo._vis import effective_json

CLAUSE = "contract §3"

describe = describe_as(
    "legit_independent", ["normalize", "effective"], orphans="drop", trailing="leave", resultOrder="tool_use"
)
normalize = FieldNormalizer()


def effective(params: dict[str, Any]) -> dict[str, Any]:
    return {"messages": effective_json(params["messages"])}
