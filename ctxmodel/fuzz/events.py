"""What a campaign tells its handlers (the live progress, the HTML report, a Redis campaign), as
events of the engine's kind (``ctxmodel.events``), handed out by the same ``Emitter``.

The scheduler (``ctxmodel.fuzz.campaign``) decides what runs where and keeps the figures in the
ledger; everything a campaign shows or shares is a handler of these, so a new way of watching a
campaign is one more handler, not a change to the scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ctxmodel.events import Event
from ctxmodel.fuzz.ledger import Ledger
from ctxmodel.fuzz.results import CampaignResult, FailureRecord

__all__ = ["CampaignFinished", "CampaignNote", "CampaignStarted", "CampaignTick", "KindKept", "SliceTallied",
           "UnitFailed"]


@attrs.frozen
class CampaignStarted(Event):
    ledger: Ledger


@attrs.frozen
class SliceTallied(Event):
    """Examples a slice judged since its last tally, and the labels they reached."""

    unit: str
    examples: int
    labels: Mapping[str, int]


@attrs.frozen
class KindKept(Event):
    """A kind met for the first time in the campaign, its fixture on disk (``record.fixture``)."""

    record: FailureRecord


@attrs.frozen
class UnitFailed(Event):
    """A unit that cannot run on (its strategy or check broke, its worker died): it is retired."""

    unit: str
    text: str


@attrs.frozen
class CampaignNote(Event):
    text: str


@attrs.frozen
class CampaignTick(Event):
    """Sent twice a second: the campaign so far."""

    wall: float
    result: CampaignResult


@attrs.frozen
class CampaignFinished(Event):
    wall: float
    result: CampaignResult
