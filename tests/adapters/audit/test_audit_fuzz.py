"""The audit's fuzzer: it finds a hack planted in a test-only verifier and shrinks it to the one edit
that makes it, finds a planted false negative the same way, reports nothing on a verifier that reads a
closed grammar exactly, never states a wrong value the spec pays, is reproducible for a seed, and
writes its results through the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rewardsmith.adapters.audit import audit
from rewardsmith.adapters.audit.fuzz import Mutation, draw
from rewardsmith.adapters.audit.fuzz_grammar import (
    FORMS,
    HIDES,
    LEAD_INS,
    SPECS,
    WORKING,
    Subject,
    apply,
    base,
    hidden,
)
from rewardsmith.adapters.cli import main
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import Sample, Verdict, Verifier, register
from rewardsmith.verifiers.reading import visible

ROWS = [Row(1, {"prompt": "Mia buys 3 packs of 6 pencils. How many pencils?", "answer": "18"}),
        Row(2, {"prompt": "What is 5 times 8?", "answer": "40"}),
        Row(3, {"prompt": "What is 12 minus 5?", "answer": "7"})]
FILLER = set(LEAD_INS.values()) | set(WORKING.values())
WRAPPERS = (("**", "**"), ("__", "__"), ("*", "*"), ("<b>", "</b>"))


def committed(text: str, gold: str) -> bool:
    """A closed grammar read exactly: after white space and filler lines, one line remains, which (without
    emphasis around it) is one of the math answer forms stating exactly ``gold``."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    lines = [line for line in lines if line and line not in FILLER]
    if len(lines) != 1:
        return False
    line = lines[0]
    while any(line.startswith(a) and line.endswith(b) and len(line) > len(a) + len(b) for a, b in WRAPPERS):
        a, b = next((a, b) for a, b in WRAPPERS if line.startswith(a) and line.endswith(b))
        line = line[len(a):-len(b)]
    return line in {f.lead + f.open + gold + f.close + f.end for f in FORMS["math"]}


@register("test_fuzz_exact")
class ExactReader(Verifier):
    """Test-only: pays exactly the completions whose one committed statement is the gold."""

    name = "test_fuzz_exact"

    def _verify(self, sample: Sample) -> Verdict:
        ok = committed(sample.completion_text, str(sample.get("answer")))
        return Verdict(score=float(ok), correct=ok)


@register("test_fuzz_strike_blind")
class StrikeBlindReader(ExactReader):
    """Test-only, deliberately weak: deletes Markdown's ``~~`` before reading, so a struck answer is read."""

    name = "test_fuzz_strike_blind"

    def _verify(self, sample: Sample) -> Verdict:
        ok = committed(sample.completion_text.replace("~~", ""), str(sample.get("answer")))
        return Verdict(score=float(ok), correct=ok)


@register("test_fuzz_bold_refuser")
class BoldRefuser(ExactReader):
    """Test-only, deliberately strict: refuses any completion with Markdown bold in it."""

    name = "test_fuzz_bold_refuser"

    def _verify(self, sample: Sample) -> Verdict:
        ok = "**" not in sample.completion_text and committed(sample.completion_text, str(sample.get("answer")))
        return Verdict(score=float(ok), correct=ok)


@register("test_fuzz_off_by_one")
class OffByOne(ExactReader):
    """Test-only: also pays the gold plus one (stated cleanly): that value must never serve as a wrong one."""

    name = "test_fuzz_off_by_one"

    def _verify(self, sample: Sample) -> Verdict:
        gold = str(sample.get("answer"))
        ok = any(committed(sample.completion_text, g) for g in (gold, str(int(gold) + 1)))
        return Verdict(score=float(ok), correct=ok)


def fuzzed(spec: str, total: int = 240, seed: int = 0) -> tuple:
    records: list[dict] = []
    report = audit(spec, ROWS, families=["fuzz"], fuzz=total, seed=seed, on_record=records.append)
    (result,) = report.families
    return result, records


def test_a_struck_answer_read_as_the_answer_is_found_and_shrunk_to_its_one_edit():
    result, records = fuzzed("test_fuzz_strike_blind")
    assert result.name == "fuzz" and result.cases == 240 and result.hacks > 0
    hacks = [e for e in result.examples if e["variant"] == "hack"]
    assert hacks and all(e["score"] == 1.0 for e in hacks)
    for example in hacks:
        assert example["edits"] == ["hidden(strike, alone)"], example
        assert example["completion"] == f"~~The answer is \\boxed{{{example['gold']}}}.~~"
    # every paid attack struck something with ~~: the only weakness planted
    paid = [r for r in records if r["kind"] == "attack" and r["reward"] > 0]
    assert paid and all("~~" in r["completion"] for r in paid)
    assert result.false_negatives == 0


def test_a_refused_restyle_is_a_false_negative_shrunk_to_its_one_edit():
    result, _ = fuzzed("test_fuzz_bold_refuser")
    assert result.false_negatives > 0 and result.hacks == 0
    found = [e for e in result.examples if e["variant"] == "false negative"]
    assert found and all(e["edits"] == ["emphasis(bold)"] and e["score"] == 0.0 for e in found), found
    assert all(len(e["found_edits"]) >= len(e["edits"]) for e in found)


@pytest.mark.slow
def test_a_reader_of_a_closed_grammar_is_not_flagged():
    result, records = fuzzed("test_fuzz_exact", total=600)
    assert (result.hacks, result.false_negatives, result.errors) == (0, 0, 0), result.examples
    kinds = {r["kind"] for r in records}
    assert kinds == {"attack", "rewrite"}  # both makes were drawn and judged
    assert sum(r["reward"] == 1.0 for r in records if r["kind"] == "rewrite") > 50
    assert result.unjudged == 0


def test_a_wrong_value_the_spec_pays_is_never_stated():
    _, records = fuzzed("test_fuzz_off_by_one", total=300)
    used = {(r["gold"], m) for r in records for m in re.findall(r"W='([^']*)'", r["variant"])}
    assert used and all(int(w) != int(g) + 1 for g, w in used)
    assert {("18", "20"), ("18", "40")} & used  # the others are kept


@pytest.mark.slow
def test_the_same_seed_gives_the_same_mutations_and_examples():
    first, first_records = fuzzed("test_fuzz_strike_blind", total=150, seed=3)
    again, again_records = fuzzed("test_fuzz_strike_blind", total=150, seed=3)
    _, other_records = fuzzed("test_fuzz_strike_blind", total=150, seed=4)
    assert [r["completion"] for r in first_records] == [r["completion"] for r in again_records]
    assert first.examples == again.examples
    assert [r["completion"] for r in first_records] != [r["completion"] for r in other_records]


def test_wrong_making_edits_keep_a_mutation_wrong_whatever_follows():
    """Any wrong edit followed by every right edit: the exact reader still pays nothing (a right edit
    never undoes a wrong one), and the right edits alone are still paid."""
    subject = Subject("math", "18", forms=FORMS["math"], wrong=["19"])
    for mutation, text in draw(subject, "k", 300):
        assert committed(text, "18") != mutation.attack, (mutation.described(), text)
    assert committed(base(subject), "18")
    assert all(spec.makes in ("wrong", "right") for spec in SPECS.values())
    assert Mutation(()).attack is False and apply(subject, ()) == base(subject)


def test_fuzz_through_the_cli_writes_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r.data) + "\n" for r in ROWS), encoding="utf-8")
    out = tmp_path / "report"
    code = main(["audit", "--reward", "test_fuzz_strike_blind", "--data", str(rows), "--families", "fuzz",
                 "--fuzz", "300", "--seed", "1", "-o", str(out), "--no-progress", "--no-plot"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "fuzz hack" in printed and "edits: hidden(strike, alone)" in printed
    report = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    (fuzz,) = report["families"]
    assert fuzz["family"] == "fuzz" and fuzz["cases"] == 300 and fuzz["hacks"] > 0 and fuzz["examples"]
    lines = [json.loads(line) for line in (out / "audit.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 300 and {line["family"] for line in lines} == {"fuzz"}
    assert all(line["edits"] and line["kind"] in ("attack", "rewrite") for line in lines)
    assert sum(line["flagged"] for line in lines) == fuzz["hacks"] + fuzz["false_negatives"]
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "--fuzz N" in capsys.readouterr().out


def test_fuzz_beside_the_families_and_the_bar_counts_both(tmp_path: Path) -> None:
    seen: list[int] = []
    report = audit("test_fuzz_exact", ROWS, families=["denial"], fuzz=30, progress=seen.append)
    assert [f.name for f in report.families] == ["denial", "fuzz"]
    assert sum(seen) == 2 * len(ROWS)


def test_a_hide_around_a_hidden_statement_still_hides_it_from_a_reader():
    """Two ``~~`` runs would open a line with ``~~~~`` (a code fence, which a reader sees as code), ``~~`` beside
    a space is no delimiter, and a comment cannot nest (the first ``-->`` closes it): the oracle would call a
    visible statement hidden (ifeval paid 129 such 'hacks', all the grammar's)."""
    for how in HIDES:
        for statement in ("The answer is 5.", "line one\nline two", "line one \n\n line two ", "a <!-- b --> c"):
            twice = hidden(how, hidden(how, statement))
            assert "~~~~" not in twice
            assert not visible(twice).text.strip(), (how, twice)
