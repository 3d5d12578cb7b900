"""Legitimate: a last assistant message with ``tool_use`` gets synthetic results (``trailing=close``, declared in
describe), as metaworx/zoo-code-history-repair closes an interrupted task (domain §6).

Contract: §3 policies, "trailing (leave: ... ; close: it gets synthetic results; default leave)".
Code path: ``describe`` (the policy) and the trailing step of ``normalize_history``.
"""

from ._kit import Agent, declare


class V(Agent):
    name = "legit-trailing-close"
    policies = declare(trailing="close")


describe, normalize, effective, request, recover, count = V().ops()
