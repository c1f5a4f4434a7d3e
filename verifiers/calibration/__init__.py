"""Calibration: the ``brier`` verifier (:mod:`~rewardsmith.verifiers.calibration.brier`) and the
reading of a stated confidence (:mod:`~rewardsmith.verifiers.calibration.confidence`).

Importing this package registers ``brier``; the public names of both modules are here.
"""

from rewardsmith.verifiers.calibration.brier import PROPAGATED, BrierVerifier, brier_reward
from rewardsmith.verifiers.calibration.confidence import (
    DEFAULT_PATTERNS,
    ConfidenceMatch,
    coerce_confidence,
    compile_patterns,
    extract_confidence,
    find_confidence,
    strip_confidence,
)

__all__ = [
    "DEFAULT_PATTERNS",
    "PROPAGATED",
    "BrierVerifier",
    "ConfidenceMatch",
    "brier_reward",
    "coerce_confidence",
    "compile_patterns",
    "extract_confidence",
    "find_confidence",
    "strip_confidence",
]
