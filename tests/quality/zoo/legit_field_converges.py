"""``_field.FieldRecovery`` declaring recoverSuccess=converges: success once something was hidden or shrunk.

The base of the converging bug variants (``bug_converges_one_cut``, ``bug_converges_halfway``,
``bug_shrunk_counts_skips``). Each call aims at the budget itself, so a result over budget means
little or nothing more can be hidden or cut, and a later call returns a controlled error (contract
§4.6, §4.7; ``field_check.py`` checks the three more calls).
"""

from __future__ import annotations

from tests.quality.zoo._common import describe_as
from tests.quality.zoo._field import FieldRecovery

CLAUSE = "contract §4.7"


class Converging(FieldRecovery):
    recover_success = "converges"


describe = describe_as("legit_field_converges", ["recover"], recoverSuccess="converges")
recover = Converging()
