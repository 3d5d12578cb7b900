"""Legitimate: the control, declaring its tokenizer by the encoding name ``o200k_base`` instead of the alias.

Contract: §7 "tokenizer: an encoding name (o200k_base, cl100k_base) means that encoding with the field's fudge of
1.5 applied once per counter call ... Short aliases may exist; the encoding names must work."
Code path: ``describe``.
"""

from ._kit import Agent


class V(Agent):
    name = "legit-tokenizer-name"
    tokenizer = "o200k_base"


describe, normalize, effective, request, recover, count = V().ops()
