"""The Gemini dialect on the histories Google's own SDK writes, in each spelling it dumps.

Builds a two-round tool conversation with ``google.genai.types`` (parallel calls, a signature on
the first call of each step), dumps it as a Python framework stores it (snake_case, with and
without nulls) and as REST sends it (camelCase), and checks that ctxmodel reads each as Gemini,
finds nothing wrong, flags the same history with a response and a signature removed, and that the
SDK reads ctxmodel's repair back. The SDK is not a dependency of ctxmodel; run it in its own
environment, pinned:

    python3 -m venv /tmp/genai && /tmp/genai/bin/pip install google-genai==1.75.0 -e .
    /tmp/genai/bin/python examples/gemini/google_genai_shapes.py
"""

from __future__ import annotations

import copy
from typing import Any

from google.genai import types

from ctxmodel.dialects import detect
from ctxmodel.dialects.gemini import SKIP_SIGNATURE, dump, load, repair, validate

SIGNATURE = b"\x12\x34signature"


def conversation() -> list[types.Content]:
    def call(name: str, signed: bool) -> types.Part:
        return types.Part(function_call=types.FunctionCall(name=name, args={"path": "."}),
                          thought_signature=SIGNATURE if signed else None)

    def answer(name: str) -> types.Part:
        return types.Part.from_function_response(name=name, response={"output": "ok"})

    return [
        types.Content(role="user", parts=[types.Part(text="list the files and read the README")]),
        types.Content(role="model", parts=[call("list_files", True), call("read_file", False)]),
        types.Content(role="user", parts=[answer("list_files"), answer("read_file")]),
        types.Content(role="model", parts=[call("shell", True)]),
        types.Content(role="user", parts=[answer("shell")]),
    ]


def main() -> int:
    spellings: dict[str, dict[str, Any]] = {
        "snake_case, no nulls": {"mode": "json", "exclude_none": True},
        "snake_case, with nulls": {"mode": "json"},
        "camelCase (REST)": {"mode": "json", "exclude_none": True, "by_alias": True},
    }
    failed = 0
    for label, how in spellings.items():
        stored = [c.model_dump(**how) for c in conversation()]
        broken = copy.deepcopy(stored)
        for part in broken[3]["parts"]:
            part.pop("thought_signature", None)
            part.pop("thoughtSignature", None)
        del broken[2]["parts"][1]
        fixed, _ = repair(load(broken))
        back = [types.Content.model_validate(c) for c in dump(fixed)]
        reread = back[3].model_dump(mode="json", exclude_none=True)["parts"][0]["thought_signature"]
        checks = {
            "read as gemini": detect(stored).name == "gemini",
            "valid passes": validate(load(stored)) == [],
            "broken flagged": [v.rule for v in validate(load(broken))]
            == ["function-response-count", "missing-thought-signature"],
            "repair passes": validate(fixed) == [],
            "SDK reads the repair": reread == SKIP_SIGNATURE,
        }
        failed += not all(checks.values())
        print(f"{label:24} " + "  ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in checks.items()))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
