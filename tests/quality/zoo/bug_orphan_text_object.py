"""An orphan with list content is turned to text as "Tool result:\n[object Object]" (JavaScript string concatenation).

Roo's append path writes ``"Tool result:\n" + content`` (domain §2.3); forgetting ``JSON.stringify``
for array content loses every text item. Declares ``orphans=to_text``, which must keep the content.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as

CLAUSE = "contract §3.4"


class ObjectObject(FieldNormalizer):
    orphans = "to_text"

    def orphan(self, block: dict[str, Any], uses: list[str], taken: set[str]) -> dict[str, Any] | None:
        content = block.get("content")
        if isinstance(content, list):
            body = ",".join("[object Object]" for _ in content)  # String(array) in JavaScript
        else:
            body = content if isinstance(content, str) else "undefined"
        return {"type": "text", "text": "Tool result:\n" + body}


describe = describe_as("bug_orphan_text_object", ["normalize"], orphans="to_text")
normalize = ObjectObject()
