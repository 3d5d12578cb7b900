"""Two independent bugs that break two different properties on every input: ``count`` answers one
token too many (``count.agrees``) and ``effective`` sends no message at all (``effective.visibility``).

Every input fails, so each kind shrinks to its minimal input in a few steps: two campaign machines,
each running one of the properties, meet different kinds in seconds, and the campaign they joined
holds the union of what each met.
"""

from __future__ import annotations

from tests.targets.variant_reference import Params, Reference


class TwoPlaces(Reference):
    name = "broken-two-places"

    def count(self, params: Params) -> Params:
        out = super().count(params)
        return {**out, "tokens": int(out["tokens"]) + 1}

    def effective(self, params: Params) -> Params:
        return {**super().effective(params), "messages": []}
