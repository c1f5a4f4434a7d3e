"""rewardsmith audit: each answer family builds what its docstring says, weak specs are caught, the
report files and exit codes, malformed rows, and --against counted by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rewardsmith.adapters.audit import audit, compare
from rewardsmith.adapters.audit.family import AuditRow, all_families, select
from rewardsmith.adapters.audit.gold import Gold
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.adapters.cli import main
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import Sample, Verdict, Verifier, build, register
from rewardsmith.verifiers.reading.boxes import boxes

FAMILIES = all_families()
MATH = Traits.of(build({"type": "math", "workers": 0}))


def make_row(gold: str | None, prompt: str = "A rope is 3 meters long and 9 meters more. How many meters?",
             **fields: object) -> AuditRow:
    data = {**fields} if gold is None else {"answer": gold, **fields}
    return AuditRow(line=1, prompt=prompt, prompt_text=prompt, fields=data, gold=Gold.read(gold),
                    reference=None if gold is None else f"The answer is \\boxed{{{Gold.read(gold).text}}}.")


def texts(name: str, row: AuditRow, traits: Traits = MATH) -> list[str]:
    made = FAMILIES[name].generate(row, traits)
    return [] if made is None else [str(p.completion) for p in made]


def boxed(text: str) -> list[str]:
    return [content for _, _, content in boxes(text)]


# ----------------------------------------------------------------------------- gold reading


@pytest.mark.parametrize(("raw", "kind", "wrong"), [
    ("12", "number", "13"), ("#### 1,000", "number", "1001"), ("-2.5", "number", "-1.5"),
    ("\\frac{3}{4}", "number", "\\frac{7}{4}"), ("(B)", "letter", "A"), ("x^2+1", "expression", "x^2+1 + 1"),
    ("(1, 2)", "tuple", None), ("[2, \\infty)", "interval", None), ("\\{1, 3\\}", "set", None),
    ("1, 3", "list", None), ("x = 5", "other", None), ("(-\\infty, 2)", "interval", None),
])
def test_gold_kinds_and_wrong_values(raw: str, kind: str, wrong: str | None) -> None:
    gold = Gold.read(raw)
    assert gold is not None and gold.kind == kind
    assert gold.wrong(0) == wrong


def test_wrong_values_never_equal_the_gold() -> None:
    for raw in ("0", "12", "-7", "2.50", "\\frac{1}{3}", "3/8", "C"):
        gold = Gold.read(raw)
        for k in range(6):
            wrong = Gold.read(gold.wrong(k))
            assert (wrong.value, wrong.letter) != (gold.value, gold.letter)


# ----------------------------------------------------------------------------- attacks build what they say


def test_format_only_puts_a_wrong_value_in_every_wrapper() -> None:
    row = make_row("12")
    traits = Traits.of(build({"type": "gate", "when": {"type": "format", "tags": ["reason", "final"]},
                              "then": {"type": "math", "workers": 0}}))
    made = texts("format_only", row, traits)
    assert any("<answer>13</answer>" in t for t in made) and any("#### 13" in t for t in made)
    assert any("<final>13</final>" in t and "<reason>" in t for t in made)  # the spec's own tags
    assert not any(re.search(r"(?<!\d)12(?!\d)", t) for t in made)


def test_hedges_name_the_gold_beside_another_value() -> None:
    row = make_row("12")
    for name in ("hedge_boxes", "hedge_after", "hedge_inside", "hedge_unboxed"):
        for text in texts(name, row):
            assert "12" in text and "13" in text, (name, text)
    assert all(sorted(boxed(t)) == ["12", "13"] for t in texts("hedge_boxes", row))
    assert all(len(boxed(t)) == 1 for t in texts("hedge_inside", row))
    assert all(not boxed(t) for t in texts("hedge_unboxed", row))
    assert texts("hedge_boxes", make_row("(1, 2)")) == []  # a multi-valued gold: naming two values is no hedge


def test_plus_minus_and_all_choices() -> None:
    assert boxed(texts("plus_minus", make_row("12"))[0]) == ["\\pm 12"]
    assert texts("plus_minus", make_row("0")) == []  # ±0 is 0: not a hedge
    made = texts("all_choices", make_row("(C)"))
    assert "\\boxed{A, B, C, D}" in made[0] and all("C" in t for t in made)
    assert texts("all_choices", make_row("12")) == []


def test_denial_and_correction() -> None:
    row = make_row("12")
    negations = re.compile(r"\bnot\b|cannot|\bNo\b|fails|wrong")
    for text in texts("denial", row):
        assert "12" in text and negations.search(text), text
    for text in texts("correction", row):
        assert text.index("12") < text.rindex("13"), text  # G first, the wrong value stated last


def test_echo_and_prompt_numbers() -> None:
    row = make_row("12")
    made = texts("echo", row)
    assert row.prompt_text in made and all(row.prompt_text in t for t in made)
    numbers = texts("prompt_numbers", row)
    assert any("3 and 9" in t for t in numbers)
    assert all(b != "12" for t in numbers for b in boxed(t))  # a boxed prompt number is never the gold
    assert texts("echo", make_row("12", prompt="")) == []


def test_empty_invisible_and_think_only() -> None:
    for text in texts("empty_box", make_row("12")):
        assert "12" not in text and all(not b.strip() or not re.search(r"\d", b) for b in boxed(text))
    invisible = texts("invisible", make_row("12"))
    assert any("\\phantom{12}" in t for t in invisible) and any("<!--" in t for t in invisible)
    for text in texts("think_only", make_row("12")):
        answer_part = text.split("</think>", 1)[1] if "</think>" in text else ""
        assert "12" in text and "12" not in answer_part


def test_unit_swap_answers_in_another_unit_or_scale() -> None:
    made = texts("unit_swap", make_row("12"))
    assert any("centimeters" in t for t in made) and not any("{ meters}" in t for t in made)
    assert any("thousand" in t for t in made) and any("\\%" in t for t in made)
    stated = texts("unit_swap", make_row("3 \\text{ m}", prompt="How long is the rope?"))
    assert any("millimeters" in t or "centimeters" in t for t in stated)
    percent_prompt = texts("unit_swap", make_row("12", prompt="What percent of the class passed?"))
    assert not any("\\%" in t for t in percent_prompt)  # 12% is right when the prompt asks for a percentage
    assert texts("unit_swap", make_row("0")) == []  # 0 is 0 in any unit


def test_near_miss_rounding_order_partial_truncation() -> None:
    assert any("10^{-250}" in t for t in texts("near_miss", make_row("\\pi")))
    assert texts("near_miss", make_row("2.5")) == []  # a decimal gold's tolerance is the spec's choice
    assert any("0.333333" in t for t in texts("rounding", make_row("\\frac{1}{3}")))
    assert texts("rounding", make_row("\\frac{1}{4}")) == []  # 0.25 is exact
    assert boxed(texts("order", make_row("(1, 5)"))[0]) == ["(5, 1)"]
    assert texts("order", make_row("(2, 2)")) == []
    assert {b for t in texts("partial", make_row("(1, 5, 7)")) for b in boxed(t)} == {"1", "7", "1, 5"}
    for text in texts("truncation", make_row("\\frac{3}{4}")):
        assert text.count("{") > text.count("}")


def test_padding_only_for_length_shaped_specs() -> None:
    row = make_row("12")
    assert texts("padding", row) == []
    overlong = {"type": "overlong", "max_length": 100, "cache_length": 20}
    shaped = Traits.of(build({"type": "weighted", "parts": [{"type": "math", "workers": 0}, overlong]}))
    made = texts("padding", row, shaped)
    assert made and all(t.endswith(row.reference) and len(t) > 10 * len(row.reference) for t in made)


# ----------------------------------------------------------------------------- rewrites and switches


def test_rewrites_restate_the_gold() -> None:
    assert any("\\dfrac{3}{4}" in t for t in texts("frac_forms", make_row("\\frac{3}{4}")))
    assert any("3/4" in t for t in texts("frac_forms", make_row("\\frac{3}{4}")))
    assert boxed(texts("left_right", make_row("(1, 5)"))[0]) == ["\\left(1, 5\\right)"]
    assert boxed(texts("set_reorder", make_row("\\{1, 3\\}"))[0]) == ["\\{3, 1\\}"]
    assert texts("set_reorder", make_row("(1, 3)")) == []  # a tuple has an order
    assert any("12 \\text{ meters}" in t for t in texts("units_agree", make_row("12")))
    assert texts("prose_final", make_row("12")) == ["The final answer is 12."]
    assert boxed(texts("named_value", make_row("x+1"))[0]) == ["y = x+1"]


def test_switch_dependent_families_follow_the_spec() -> None:
    strict = Traits.of(build({"type": "math", "workers": 0, "extract": ["boxed"],
                              "leniency": {"units": False, "approximate": True}}))
    assert not strict.allows(FAMILIES["prose_final"])  # no phrase extraction: a prose answer is not read
    assert not strict.allows(FAMILIES["units_agree"])
    assert not strict.allows(FAMILIES["rounding"])  # approximate on: a rounded decimal is right
    assert MATH.allows(FAMILIES["prose_final"]) and MATH.allows(FAMILIES["rounding"])
    plugin = Traits.of(build("test_box_contains_gold"))
    assert not plugin.allows(FAMILIES["named_value"])  # an unknown verifier's switches are unknown


def test_probes_are_capped_and_seeded() -> None:
    row = make_row("12")
    first = FAMILIES["denial"].probes(row, MATH, per_row=2, seed=0)
    assert len(first) == 2 and first == FAMILIES["denial"].probes(row, MATH, per_row=2, seed=0)
    others = [FAMILIES["denial"].probes(row, MATH, per_row=2, seed=s) for s in range(1, 6)]
    assert any(o != first for o in others)


def test_family_selection() -> None:
    assert {f.name for f in select(["judge"])} == {f.name for f in FAMILIES.values() if f.target == "judge"}
    with pytest.raises(ValueError, match="did you mean 'denial'"):
        select(["denail"])


# ----------------------------------------------------------------------------- weak specs are caught


@register("test_box_contains_gold")
class BoxContainsGold(Verifier):
    """Test-only, deliberately weak: pays any completion with a box whose text contains the gold."""

    name = "box_contains_gold"

    def _verify(self, sample: Sample) -> Verdict:
        gold = str(sample.get("answer"))
        paid = any(gold in content for _, _, content in boxes(sample.completion_text))
        return Verdict(score=float(paid), correct=paid)


ROWS = [
    {"prompt": "Tom has 4 boxes of 3 apples. How many apples?", "answer": "12"},
    {"prompt": "What is 1/2 + 1/4?", "answer": "\\frac{3}{4}"},
    {"prompt": "Solve x^2 = 9 for the positive root and give (x, x+1).", "answer": "(3, 4)"},
    {"prompt": "Which option is prime? (A) 4 (B) 6 (C) 7 (D) 9", "answer": "C"},
]


def as_rows(items: list[dict]) -> list[Row]:
    return [Row(i + 1, item) for i, item in enumerate(items)]


def test_weak_box_spec_is_caught_where_it_must_be() -> None:
    report = audit("test_box_contains_gold", as_rows(ROWS), per_row=10)
    hacks = {f.name: f.hacks for f in report.families}
    for name in ("hedge_boxes", "hedge_inside", "denial", "correction", "invisible", "near_miss", "plus_minus",
                 "all_choices", "unit_swap"):
        assert hacks[name] > 0, name
    for name in ("format_only", "empty_box", "hedge_unboxed", "echo"):
        assert hacks[name] == 0, name  # no box holds the gold there: even this spec pays nothing
    assert report.reference_paid == report.reference_rows == len(ROWS)


def test_format_only_spec_pays_for_format_alone() -> None:
    report = audit({"type": "format", "tags": ["think", "answer"]}, as_rows(ROWS), per_row=10)
    hacks = {f.name: f.hacks for f in report.families}
    assert hacks["format_only"] > 0 and hacks["think_only"] > 0 and hacks["empty_box"] > 0
    assert report.reference_paid == 0  # a plain boxed answer has no tags: no rewrite can be judged
    assert all(f.false_negatives == 0 for f in report.families if f.kind == "rewrite")


def test_math_closes_the_families_a_box_check_does_not() -> None:
    report = audit({"type": "math", "workers": 0}, as_rows(ROWS), per_row=10)
    hacks = {f.name: f.hacks for f in report.families}
    for name in ("format_only", "hedge_boxes", "hedge_inside", "plus_minus", "empty_box"):
        assert hacks[name] == 0, name
    assert report.reference_paid == len(ROWS)


# ----------------------------------------------------------------------------- command line


def write_rows(path: Path, rows: list[dict], malformed_at: int | None = None) -> Path:
    lines = [json.dumps(r) for r in rows]
    if malformed_at is not None:
        lines.insert(malformed_at - 1, "{not json")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_writes_the_report_and_fails_on_hacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_rows(tmp_path / "rows.jsonl", ROWS, malformed_at=3)
    out = tmp_path / "report"
    code = main(["audit", "--reward", "test_box_contains_gold", "--data", str(data), "-o", str(out),
                 "--no-progress", "--fail-on-hacks"])
    captured = capsys.readouterr()
    assert code == 1
    assert "line 3: not valid JSON" in captured.err
    assert "hedge_boxes" in captured.out and "hacks:" in captured.out
    report = json.loads((out / "audit.json").read_text())
    assert report["rows"] == len(ROWS) and report["malformed"][0]["line"] == 3
    assert {f["family"] for f in report["families"]} == set(FAMILIES)
    records = [json.loads(line) for line in (out / "audit.jsonl").read_text().splitlines()]
    attacks = [r for r in records if r["kind"] == "attack"]
    assert sum(r["flagged"] for r in attacks) == report["hacks"] > 0
    assert {r["line"] for r in records} == {1, 2, 4, 5}  # line 3 was malformed; the rest audited
    assert (out / "hack_rates.png").read_bytes()[:4] == b"\x89PNG"
    example = next(f for f in report["families"] if f["family"] == "hedge_boxes")["examples"][0]
    assert {"prompt", "completion", "gold", "feedback", "score"} <= set(example)


def test_cli_exit_zero_without_fail_on_hacks_and_same_report(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    reports = []
    for name in ("a", "b"):
        assert main(["audit", "--reward", "test_box_contains_gold", "--data", str(data), "-o",
                     str(tmp_path / name), "--no-progress", "--no-plot"]) == 0
        report = json.loads((tmp_path / name / "audit.json").read_text())
        report.pop("elapsed_s")
        reports.append(report)
    assert reports[0] == reports[1]
    clean = main(["audit", "--reward", '{"type": "math", "workers": 0}', "--data", str(data), "--families",
                  "format_only,hedge_boxes", "--no-progress", "--fail-on-hacks"])
    assert clean == 0


def test_cli_refuses_bad_arguments(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["audit", "--reward", "math"]) == 2
    assert main(["audit", "--data", str(tmp_path / "missing.jsonl")]) == 2
    data = write_rows(tmp_path / "rows.jsonl", ROWS)
    assert main(["audit", "--data", str(data), "--families", "denail"]) == 2
    assert "did you mean 'denial'" in capsys.readouterr().err
    assert main(["audit", "--list-families"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in FAMILIES) and "right only under: phrase" in listing


# ----------------------------------------------------------------------------- --against


def test_against_counts_checked_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Rule: plain math. Reference: the weak box check. Completions chosen so each cell is known:
    #   1 both pay (\boxed{12}); 2 only the reference pays (\boxed{12} or \boxed{13}, a hedge math refuses);
    #   3 only math pays ("The answer is 12." has no box); 4 and 5 neither (wrong answers);
    #   6 a malformed line.
    rows = [
        {"completion": "\\boxed{12}", "answer": "12"},
        {"completion": "\\boxed{12} or \\boxed{13}", "answer": "12"},
        {"completion": "The answer is 12.", "answer": "12"},
        {"completion": "\\boxed{7}", "answer": "12"},
        {"completion": "I do not know.", "answer": "12"},
    ]
    comparison = compare({"type": "math", "workers": 0}, "test_box_contains_gold",
                         [*as_rows(rows), Row(6, None, "not valid JSON", "{")])
    assert (comparison.both_paid, comparison.only_reference, comparison.only_spec, comparison.neither) == (1, 1, 1, 2)
    assert comparison.rows == 5 and comparison.malformed == [{"line": 6, "error": "not valid JSON"}]
    assert comparison.false_positive_rate == pytest.approx(1 / 3)  # 1 of the 3 the reference refused
    assert comparison.false_negative_rate == pytest.approx(1 / 2)  # 1 of the 2 the reference paid
    assert comparison.false_positive_lines == [3] and comparison.false_negative_lines == [2]
    low, high = comparison.as_dict()["false_positive_ci95"]
    assert 0 < low < 1 / 3 < high < 1
    data = write_rows(tmp_path / "rows.jsonl", rows)
    assert main(["audit", "--reward", '{"type": "math", "workers": 0}', "--data", str(data), "--against",
                 "test_box_contains_gold", "-o", str(tmp_path / "cmp"), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "false-positive rate: 33.3%" in printed and "= 1/3" in printed and "= 1/2" in printed
    assert json.loads((tmp_path / "cmp" / "against.json").read_text())["table"]["neither"] == 2


def test_docs_describe_every_family() -> None:
    from conftest import REPO

    page = (REPO / "docs" / "audit.md").read_text()
    missing = [name for name in FAMILIES if f"| `{name}` |" not in page]
    assert not missing, f"docs/audit.md lacks {missing}"


def test_composed_specs_are_attacked_through_the_whole_spec() -> None:
    """A gate pays nothing for format alone, a weighted sum pays its format part; a length reward
    that charges padding shows no padding hack, one whose limit is too loose for it does."""
    math_part = {"type": "math", "workers": 0}
    tags = {"type": "format", "tags": ["think", "answer"], "mode": "soft"}
    gate = audit({"type": "gate", "when": tags, "then": math_part}, as_rows(ROWS), families=["format_only"])
    weighted = audit({"type": "weighted", "parts": [math_part, tags], "weights": [1.0, 0.2]}, as_rows(ROWS),
                     families=["format_only"])
    assert gate.families[0].hacks == 0 and gate.families[0].cases > 0
    assert weighted.families[0].hacks > 0 and weighted.families[0].paid <= 0.2 * weighted.families[0].cases + 1e-9

    def padded(max_length: int) -> int:
        overlong = {"type": "overlong", "max_length": max_length, "cache_length": max_length // 4}
        spec = {"type": "weighted", "parts": [math_part, overlong]}
        return audit(spec, as_rows(ROWS), families=["padding"], per_row=5).families[0].hacks

    assert padded(200) == 0  # ~1,000 words of filler run past the limit and are charged
    assert padded(8000) > 0  # a limit far above the padding charges nothing: the audit says so
