"""Control: the kit with no override, i.e. the reference's behaviour re-wired through ``_kit.Agent``.

Mistake: none. Contract: all of it. Code path: none; it shows the kit itself passes the gate, so
what a variant changes is what a failure is about.
"""

from ._kit import Agent


class Control(Agent):
    name = "outside-control"


describe, normalize, effective, request, recover, count = Control().ops()
