"""rewardsmith audit against the ``reasoning_gym`` reward: its families on the example rows. Every
attack (the cheats some reasoning-gym scorers pay in full among them) is refused by the default spec,
every restatement of the gold paid, and the same attacks are paid by the scorers it protects when the
stricter check is off (``unsafe: trust``), so the families do probe something."""

from __future__ import annotations

import json

from conftest import REPO, require_gym

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.family import all_families
from rewardsmith.adapters.scoring.rows import Row

FAMILIES = [f.name for f in all_families().values() if f.target == "reasoning_gym"]


def rows() -> list[Row]:
    lines = (REPO / "data" / "reasoning_gym_examples.jsonl").read_text().splitlines()
    return [Row(line=i + 1, data=json.loads(line)) for i, line in enumerate(lines)]


def test_the_default_spec_refuses_every_attack_and_pays_every_restatement():
    require_gym()
    report = audit("reasoning_gym", rows(), families=FAMILIES, per_row=10)
    by_name = {f.name: f for f in report.families}
    assert set(by_name) == {"gym_padded", "gym_hedge", "gym_unanswered", "gym_restated"}
    assert all(f.cases > 0 and f.errors == 0 for f in report.families)
    assert all(f.hacks == 0 for f in report.families if f.kind == "attack")
    assert by_name["gym_restated"].false_negatives == 0


def test_without_the_stricter_check_the_scorers_pay_the_padded_gold():
    require_gym()
    spec = {"type": "reasoning_gym", "unsafe": "trust"}
    report = audit(spec, rows(), families=["gym_padded", "gym_unanswered"], per_row=10)
    assert all(f.hacks > 0 for f in report.families)
