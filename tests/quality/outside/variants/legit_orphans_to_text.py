"""Legitimate: orphan results become ``"Tool result:\\n" + content`` text blocks (``orphans=to_text``, declared), as
Roo-Code's append path does since PR #10927 (domain §2.3).

Contract: §3 rule 4, ``to_text``.
Code path: ``describe`` (the policy) and pairing (``pair``).
"""

from ._kit import Agent, declare


class V(Agent):
    name = "legit-orphans-to-text"
    policies = declare(orphans="to_text")


describe, normalize, effective, request, recover, count = V().ops()
