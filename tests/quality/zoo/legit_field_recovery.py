"""The field-style recovery the new recovery bugs override one method of (``_field.FieldRecovery``), unchanged.

Fewest oldest visible messages hidden (a cut never ends between a call and the next visible message
holding its results), then the largest visible textual tool results cut with the notice's room
reserved, success only within budget (contract §4). If the gate flags this, a bug variant built on
it may be caught for the base's fault, not its own.
"""

from __future__ import annotations

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.7"

describe = describe_as("legit_field_recovery", ["recover"])
recover = FieldRecovery()
