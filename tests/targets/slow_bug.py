"""A normalize that puts an image before the results (contract §3.1) and takes a while on every
call: its failure is met at once and its shrink takes minutes, so a signal lands in the shrink."""

from __future__ import annotations

import time

from tests.targets.variant_reference import Params, Reference


class SlowImagesFirst(Reference):
    name = "slow-images-first"

    def normalize(self, params: Params) -> Params:
        time.sleep(0.05)
        out = super().normalize(params)
        messages = []
        for message in out["messages"]:
            content = message.get("content")
            if message.get("role") == "user" and isinstance(content, list) and content and \
                    content[0].get("type") == "tool_result":
                image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}
                message = {**message, "content": [image, *content]}
            messages.append(message)
        return {**out, "messages": messages}
