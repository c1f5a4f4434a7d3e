"""``rewardsmith audit``: attack a reward spec the way RL will and report what gets paid.

Families (:mod:`.family`) build completions that are wrong by construction (attacks) or right
by construction (rewrites) from each row; :func:`audit` scores them with ``build(spec).verify_batch``
and tallies hacks and false negatives per family; :func:`compare` (``--against``) measures one
spec's false-positive and false-negative rates against another on real completions.
"""

from rewardsmith.adapters.audit.against import Comparison, compare
from rewardsmith.adapters.audit.family import FAMILIES, AuditRow, Family, Probe, all_families, family, select
from rewardsmith.adapters.audit.run import AuditReport, FamilyResult, audit

__all__ = ["FAMILIES", "AuditReport", "AuditRow", "Comparison", "Family", "FamilyResult", "Probe", "all_families",
           "audit", "compare", "family", "select"]
