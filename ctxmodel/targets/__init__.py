"""The implementations under test, behind one interface (contract §7): see ``base.Target``."""

from ctxmodel.targets.base import OPS, Description, Target, TargetFailure
from ctxmodel.targets.spec import TargetSpec, open_target, parse_spec

__all__ = ["OPS", "Description", "Target", "TargetFailure", "TargetSpec", "open_target", "parse_spec"]
