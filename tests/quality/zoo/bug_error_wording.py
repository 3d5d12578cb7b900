"""The controlled error says "Failed to condense context: ..." instead of "Context window recovery failed ...".

Callers (and the contract's gate) recognise a controlled failure by its prefix (contract §4.8); an
i18n string from the condense path (domain §3.4 error keys) slipped into recovery.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import describe_as, reference_recover

CLAUSE = "contract §4.8"

describe = describe_as("bug_error_wording", ["recover"])


def recover(params: dict[str, Any]) -> dict[str, Any]:
    out = reference_recover(params)
    if out.get("error"):
        out["error"] = "Failed to condense context: " + out["error"].split(": ", 1)[-1]
    return out
