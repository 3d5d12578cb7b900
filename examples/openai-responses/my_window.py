"""A sliding window over OpenAI Responses items: the newest items that fit, from a safe start."""


def describe(params):
    return {"protocol": 1, "name": "my-window", "version": "1", "ops": ["describe", "trim", "count"],
            "tokenizer": "o200k_base", "dialect": "openai-responses",
            "policies": {"trimSystem": "any", "trimLastUser": "any"}}


def count(params):
    return {"tokens": sum(len(str(item)) // 4 for item in params["messages"])}


def _safe(items, start):
    # never open the window on an output whose call is cut off, or right after a reasoning item
    if start and items[start - 1].get("type") == "reasoning":
        return False
    cut = {i.get("call_id") for i in items[:start] if i.get("type") == "function_call"}
    return not any(i.get("type") == "function_call_output" and i.get("call_id") in cut for i in items[start:])


def trim(params):
    items, budget = params["messages"], params.get("maxTokens")
    for start in range(len(items)):
        window = items[start:]
        if _safe(items, start) and (budget is None or count({"messages": window})["tokens"] <= budget):
            return {"messages": window}
    return {"error": f"nothing fits {budget} tokens"}
