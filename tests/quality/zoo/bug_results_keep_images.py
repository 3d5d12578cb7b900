"""An image stored right after a tool_result stays right after it, so the next result no longer leads the message.

Zoo-Code issue #1774's shape ``[tr read, image, tr cmd, text]`` (domain §4.3): the image is what the
``read_file`` call returned, and a normalizer that "keeps each screenshot with the result it belongs
to" moves the results to the front but carries the image along, giving ``[tr read, image, tr cmd,
text]`` again. The API wants every ``tool_result`` before any other block of the message (domain
§5.1; contract §3.1: the message *starts* with one result per call). Code path: the results-first
arrangement of one user message.
"""

from __future__ import annotations

from typing import Any

from tests.quality.zoo._common import FieldNormalizer, describe_as, is_result

CLAUSE = "contract §3.1"


class ImagesFollowTheirResult(FieldNormalizer):
    def __init__(self) -> None:
        self._content: list[Any] = []

    def pair(self, msg: dict[str, Any], uses: list[str], valid: list[str], seen: list[str]) -> dict[str, Any] | None:
        content = msg.get("content")
        self._content = content if isinstance(content, list) else []
        return super().pair(msg, uses, valid, seen)

    def arrange(self, head: list[dict[str, Any]], others: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # the bug: an image right after a result is that call's output, so it is kept right after it
        follows = {
            before.get("tool_use_id"): block
            for before, block in zip(self._content, self._content[1:], strict=False)
            if is_result(before) and isinstance(block, dict) and block.get("type") == "image"
        }
        out: list[dict[str, Any]] = []
        moved: list[dict[str, Any]] = []
        for result in head:
            out.append(result)
            image = follows.get(result.get("tool_use_id"))
            if image is not None and any(o is image for o in others):
                out.append(image)
                moved.append(image)
        return out + [o for o in others if not any(o is m for m in moved)]


describe = describe_as("bug_results_keep_images", ["normalize"])
normalize = ImagesFollowTheirResult()
