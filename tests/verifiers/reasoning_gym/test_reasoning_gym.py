"""The ``reasoning_gym`` verifier: right answers of reasoning-gym's generators pay through its own
scorers, and every attack scores 0 (hedged tags, reasoning-only answers, partial credit, the cheats
that some scorers pay in full), with bad rows reported as ``invalid_input``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import REPO, require_docker, require_gym

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.reasoning_gym import read_answer

STRICT = build({"type": "reasoning_gym"})
TRUST = build({"type": "reasoning_gym", "unsafe": "trust"})


@pytest.fixture(scope="module")
def rows():
    """A few generated rows per dataset, made once."""
    require_gym()
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    cache: dict[str, list[dict]] = {}

    def get(name: str, size: int = 3) -> list[dict]:
        if name not in cache:
            cache[name] = make_rows(name, size=size, seed=0)
        return cache[name]

    return get


def score(row, answer_text, verifier=STRICT, completion=None):
    text = completion if completion is not None else f"<think>working</think><answer>{answer_text}</answer>"
    return verifier.verify(Sample(prompt=row["prompt"], completion=text, fields=row))


# ------------------------------------------------------------------ reading (no reasoning-gym needed)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<answer>42</answer>", "42"),
        ("<answer>\n1 2\n3 4\n</answer>", "1 2\n3 4"),  # a grid spans lines: the whole tag is the answer
        ("<answer>7</answer> so <answer> 7 </answer>", "7"),  # a restatement is fine
        ("<think><answer>9</answer></think><answer>7</answer>", "7"),  # the reasoning is never read
        ("<answer>1 2\r\n3 4\r\n</answer>", "1 2\n3 4"),  # a CRLF (or lone CR) line end is a line end
        ("<answer>1 2\r3 4</answer>", "1 2\n3 4"),
        ("<answer>156</answer>\n\nThe answer is 156.", "156"),  # the same value restated beside the tag
        ("<answer>4.5 4.5\n4.75 5.0</answer>", "4.5 4.5\n4.75 5.0"),  # a tag's second line is its own, not an offer
        ("<answer>3*4*5</answer>\nThe answer is 3*4*5.", "3*4*5"),  # data read raw: asterisks are no emphasis
    ],
)
def test_the_answer_is_the_whole_tag_content(text, expected):
    assert read_answer(text, ("answer_tag",))[0] == expected


@pytest.mark.parametrize(
    "text",
    [
        "<answer>7</answer><answer>8</answer>",  # a hedge
        "<think><answer>7</answer></think>",  # only in the reasoning
        "<!-- <answer>7</answer> -->",  # hidden
        "<answer>   </answer>",  # empty
        "The answer is 7.",  # not in a tag, and the spec reads only tags
        "".join(f"<answer>{i % 2}</answer>" for i in range(40)),  # spam
        "<answer>NOPE <answer>7</answer> </answer>",  # a tag reopened: a reader sees both NOPE and 7
        '<answer>{"0": 1, "0": 2}</answer>',  # one JSON key given two values
        "<answer>156</answer> The answer is 157.",  # another value stated after the tag
        "<answer>156</answer> \\boxed{157}",
        "<answer>156</answer>, or maybe 157",
        "The answer is 157.\n<answer>156</answer>",  # another value stated before the tag
        "\\boxed{157}.\n<answer>156</answer>",
    ],
)
def test_no_single_committed_answer_is_read(text):
    assert read_answer(text, ("answer_tag",))[0] is None


def test_a_reopened_tag_with_nothing_before_it_is_one_answer():
    assert read_answer("<answer> <answer>7</answer>", ("answer_tag",))[0] == "7"


@pytest.mark.parametrize(
    ("answer", "gold", "same"),
    [
        ("28080.0", "28080", True), ("5/10", "0.5", True), ("1e-3", "0.001", True),
        ("[[0,1],[1,0]]", "[[0, 1], [1, 0]]", True), ('["-5.2", "3"]', "['-5.2', '3']", True),
        ("apple,banana", "apple, banana", True), ("APPLE, banana", "apple, banana", True),
        ("28080.5", "28080", False), ("[true]", "[1]", False), ("[1.0]", "[1]", False),
        ("apple banana", "apple, banana", False), ("[1, 1]", "[1]", False), ("nan", "0.5", False),
    ],
)
def test_the_exact_check_lets_the_gold_decide_the_spelling(answer, gold, same):
    from rewardsmith.verifiers.reasoning_gym.policy import stricter_check

    assert (stricter_check("spell_backward", answer, gold, {}) is None) == same


def test_other_forms_are_fallbacks_only_when_asked():
    assert read_answer(r"So \boxed{12}.", ("answer_tag", "boxed"))[0] == "12"
    assert read_answer(r"\boxed{12} or \boxed{13}", ("answer_tag", "boxed"))[0] is None


# ------------------------------------------------------------------ right answers pay


@pytest.mark.parametrize(
    "name", ["chain_sum", "basic_arithmetic", "spell_backward", "maze", "arc_agi", "rotate_matrix"]
)
def test_the_generators_gold_pays(rows, name):
    for row in rows(name):
        verdict = score(row, row["answer"])
        assert (verdict.score, verdict.status, verdict.correct) == (1.0, "ok", True), verdict.feedback


def test_rows_are_json_and_metadata_tuples_are_restored(rows):
    """arc_agi's scorer compares tuples: after a JSON round trip it would pay its own gold 0.05."""
    row = json.loads(json.dumps(rows("arc_agi")[0]))
    assert score(row, row["answer"]).score == 1.0


@pytest.mark.docker
def test_docker_and_the_local_sandbox_score_alike(rows):
    require_docker()
    batch = [
        Sample(prompt=r["prompt"], completion=f"<answer>{a}</answer>", fields=r)
        for r in rows("chain_sum")
        for a in (r["answer"], "12345678")
    ]
    docker, local = (build({"type": "reasoning_gym", "backend": b}) for b in ("docker", "local"))
    expected = [1.0, 0.0] * 3
    assert [v.score for v in docker.verify_batch(batch)] == [v.score for v in local.verify_batch(batch)] == expected


# ------------------------------------------------------------------ attacks score 0


def test_a_hedge_across_tags_scores_zero(rows):
    row = rows("chain_sum")[0]
    verdict = score(row, None, completion=f"<answer>{row['answer']}</answer><answer>0</answer>")
    assert (verdict.score, verdict.status) == (0.0, "ok") and "hedge" in verdict.feedback


@pytest.mark.parametrize("answer", ["{a},{b}", "{a}_{b}", "{a},,{b}", "{a} {b}", "\u09ea{a}{b}"])
def test_a_plain_number_gold_asks_for_a_plain_number(rows, answer):
    """chain_sum's scorer strips commas and Decimal reads underscores and any script's digits: a gold of plain
    ASCII digits is answered only by plain ASCII digits (Bengali \u09ea is 4 and looks like 8)."""
    row = rows("chain_sum")[0]
    gold = str(row["answer"]).lstrip("-")
    assert len(gold) > 1
    verdict = score(row, ("-" if str(row["answer"]).startswith("-") else "") + answer.format(a=gold[:1], b=gold[1:]))
    assert verdict.score == 0.0 and "plain number" in verdict.feedback, verdict.feedback


@pytest.mark.parametrize("dress", ["**{}**", "${}$", '"{}"', "** ${}$ **", "_{}_"])
def test_presentation_around_the_whole_answer_is_not_part_of_it(rows, dress):
    row = rows("chain_sum")[0]
    assert score(row, dress.format(row["answer"])).score == 1.0


def test_a_working_sentence_that_ends_on_another_number_is_a_hedge(rows):
    """In any words and any script: a reader takes a sentence ending on a number as stating it. A computation's
    result (after =), a number of the prompt and the answer itself are not another value."""
    row = rows("chain_sum")[0]
    gold = int(row["answer"])
    for said in (f"La somme est {gold + 1}.", f"Η απάντηση είναι {gold - 1}.", f"I reckon {gold + 2}!"):
        verdict = score(row, None, completion=f"{said}\n<answer>{gold}</answer>")
        assert verdict.score == 0.0 and "hedge" in verdict.feedback, said
    for said in (f"Adding up gives {gold}.", f"So 1 + 1 = 2 and x = {gold + 5}.", "Nothing else."):
        assert score(row, None, completion=f"{said}\n<answer>{gold}</answer>").score == 1.0, said


def test_the_gold_only_in_the_reasoning_scores_zero(rows):
    row = rows("chain_sum")[0]
    verdict = score(row, None, completion=f"<think><answer>{row['answer']}</answer></think>")
    assert (verdict.score, verdict.status) == (0.0, "no_answer")


def test_partial_credit_pays_nothing_by_default(rows):
    row = rows("advanced_geometry")[1]  # its scorer pays 0.01 for any answer (this row's gold is a point, not a number)
    verdict = score(row, "banana")
    assert verdict.score == 0.0 and verdict.details["raw_score"] == pytest.approx(0.01)
    lenient = build({"type": "reasoning_gym", "partial": True})
    assert score(row, "banana", lenient).score == pytest.approx(0.01)
    floor = build({"type": "reasoning_gym", "partial": True, "min_score": 0.5})
    assert score(row, "banana", floor).score == 0.0


@pytest.mark.parametrize(
    ("name", "cheat"),
    [
        ("spell_backward", lambda row: row["answer"] + " and more words"),
        ("time_intervals", lambda row: row["answer"] + " or maybe something else"),
        ("game_of_life_halting", lambda row: "banana"),
        ("letter_jumble", lambda row: row["answer"] + " extra words here"),
    ],
)
def test_cheats_an_unsafe_scorer_pays_score_zero(rows, name, cheat):
    row = rows(name)[0]
    assert score(row, cheat(row), TRUST).score == 1.0  # the scorer itself pays the cheat
    verdict = score(row, cheat(row))
    assert (verdict.score, verdict.correct) == (0.0, False) and "unsafe" in verdict.details
    assert score(row, row["answer"]).score == 1.0  # while the gold still pays


def test_a_number_repeated_is_no_number_even_for_a_trusted_scorer(rows):
    row = rows("gsm_symbolic")[0]  # its scorer pays "28080 28080 28080 28080 28080"
    for verifier in (STRICT, TRUST):
        verdict = score(row, " ".join([row["answer"]] * 5), verifier)
        assert verdict.score == 0.0 and "plain number" in verdict.feedback


def test_puzzle24_pays_only_the_puzzles_own_numbers(rows):
    first, second = rows("puzzle24")[:2]
    assert score(first, second["answer"], TRUST).score == 1.0  # another puzzle's expression: the scorer pays
    assert score(first, second["answer"]).score == 0.0
    assert score(first, first["answer"]).score == 1.0


def test_refuse_makes_unsafe_rows_invalid(rows):
    refuse = build({"type": "reasoning_gym", "unsafe": "refuse"})
    assert score(rows("spell_backward")[0], "x", refuse).status == "invalid_input"


def test_an_over_long_answer_is_not_scored(rows):
    row = rows("chain_sum")[0]
    short_cap = build({"type": "reasoning_gym", "max_answer_chars": 5})
    assert score(row, row["answer"] + " " * 0 + "0" * 10, short_cap).score == 0.0


# ------------------------------------------------------------------ bad rows and missing dependency


def test_rows_without_what_the_scorer_needs_are_invalid_input(rows):
    row = rows("chain_sum")[0]
    no_meta = {k: v for k, v in row.items() if k != "metadata"}
    assert score(no_meta, "1").details["missing_field"] == "metadata"
    unknown = {**row, "metadata": {**row["metadata"], "source_dataset": "no_such_set"}}
    assert score(unknown, "1").status == "invalid_input"
    no_gold = {k: v for k, v in row.items() if k != "answer"}
    assert score(no_gold, "1").details["missing_field"] == "answer"
    broken = rows("time_intervals")[0]
    broken = {**broken, "metadata": {"source_dataset": "time_intervals"}}  # the scorer needs task_type
    assert score(broken, broken["answer"]).status == "invalid_input"


def test_a_sandbox_without_reasoning_gym_is_an_error_saying_what_to_do(monkeypatch, tmp_path):
    """The local sandbox's system Python with an empty scorer folder: not the completion's doing."""
    from rewardsmith.sandbox import backend as backend_module
    from rewardsmith.sandbox.local import LocalBackend

    monkeypatch.setattr(backend_module, "SCORER_SITE", str(tmp_path))
    with LocalBackend(concurrency=1) as bare:
        bare.python = lambda: "/usr/bin/python3"  # the system Python, where reasoning-gym is not installed
        verifier = build("reasoning_gym")
        verifier._backend_override = bare
        row = {"answer": "1", "metadata": {"source_dataset": "chain_sum"}}
        verdict = verifier.verify(Sample(prompt="", completion="<answer>1</answer>", fields=row))
    assert verdict.status == "error" and "install_scorers.sh" in verdict.feedback, verdict.feedback


def test_no_sandbox_is_an_error_not_a_zero(monkeypatch):
    verifier = build({"type": "reasoning_gym", "backend": "docker"})
    from rewardsmith.sandbox import backend as backend_module

    def refuse(kind="auto", concurrency=None):
        raise RuntimeError("no Docker engine answers")

    monkeypatch.setattr(backend_module, "get_backend", refuse)
    row = {"answer": "1", "metadata": {"source_dataset": "chain_sum"}}
    verdict = verifier.verify(Sample(prompt="", completion="<answer>1</answer>", fields=row))
    assert verdict.status == "error" and "no Docker engine" in verdict.feedback


def test_import_and_build_do_not_import_reasoning_gym():
    code = (
        "import sys, rewardsmith.verifiers as v; v.build('reasoning_gym').verify_batch([]); "
        "print('reasoning_gym' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO.parent))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "False"


def test_the_example_rows_get_the_verdict_they_expect():
    require_gym()
    rows = [json.loads(line) for line in (REPO / "data" / "reasoning_gym_examples.jsonl").read_text().splitlines()]
    verdicts = build("reasoning_gym").verify_batch([Sample.from_row(row) for row in rows])
    seen = {row["id"]: (v.score, v.status) for row, v in zip(rows, verdicts, strict=True)}
    expected = {
        row["id"]: {"right": (1.0, "ok"), "wrong": (0.0, "ok"), "no_answer": (0.0, "no_answer")}[row["expect"]]
        for row in rows
    }
    assert seen == expected
    assert {row["expect"] for row in rows} == {"right", "wrong", "no_answer"}


def test_the_gym_command_writes_rows_the_reward_scores(tmp_path):
    require_gym()
    from rewardsmith.adapters.cli.commands import main

    out = tmp_path / "rows.jsonl"
    assert main(["gym", "chain_sum", "--size", "3", "--seed", "1", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 and all(set(r) == {"prompt", "answer", "metadata"} for r in rows)
    verdicts = STRICT.verify_batch(
        [Sample(prompt=r["prompt"], completion=f"<answer>{r['answer']}</answer>", fields=r) for r in rows]
    )
    assert [v.score for v in verdicts] == [1.0] * 3
    assert main(["gym", "no_such_dataset", "--size", "1"]) == 2
    assert main(["gym", "puzzle24", "--size", "1", "--config", '{"max_value": 50}']) == 2  # the generator refuses it
    assert main(["gym", "puzzle24", "--size", "2", "--config", '{"max_value": 5}', "-o", str(out)]) == 0
    assert all(json.loads(line)["config"] == {"max_value": 5} for line in out.read_text().splitlines())


def test_an_answer_that_blows_up_the_scorer_is_killed_at_the_time_limit(rows):
    """simple_integration's scorer runs sympy's parse_expr on the answer: a power tower never returns."""
    limited = build({"type": "reasoning_gym", "workers": 1, "timeout_s": 2})
    row = rows("simple_integration")[0]
    verdicts = limited.verify_batch(
        [
            Sample(prompt=row["prompt"], completion=f"<answer>{a}</answer>", fields=row)
            for a in ("9**9**9**9", row["answer"])
        ]
    )
    assert [(v.score, v.status) for v in verdicts] == [(0.0, "timeout"), (1.0, "ok")]
    # An arithmetic task's answer is whole numbers and + - * /: a power is not read at all.
    row = rows("puzzle24")[0]
    verdict = limited.verify(Sample(prompt=row["prompt"], completion="<answer>9**9**9**9</answer>", fields=row))
    assert (verdict.score, verdict.status) == (0.0, "ok") and "arithmetic" in verdict.feedback


def test_the_same_answer_in_a_batch_is_scored_once_and_paid_alike(rows, monkeypatch):
    import rewardsmith.verifiers.reasoning_gym as family

    sent = []
    real = family.score_isolated
    monkeypatch.setattr(family, "score_isolated", lambda items, *a, **k: sent.append(len(items)) or real(items, *a,
                                                                                                        **k))
    row = rows("chain_sum")[0]
    texts = [f"<answer>{row['answer']}</answer>", "<answer>5</answer>"] * 4
    verdicts = STRICT.verify_batch([Sample(prompt=row["prompt"], completion=t, fields=row) for t in texts])
    assert [v.score for v in verdicts] == [1.0, 0.0] * 4 and sent == [2]


def test_a_json_answer_that_gives_one_key_two_values_is_a_hedge(rows):
    """graph_color's scorer reads the answer with json.loads, which keeps the last value of a key: a
    vertex given two colours pays there. A reader sees both: a hedge, before any scorer."""
    row = rows("graph_color")[0]
    solution = row["metadata"]["possible_answer"]
    honest = json.dumps(solution)
    assert score(row, honest).score == 1.0
    first = next(iter(solution))
    both = "{" + f'"{first}": {solution[first] % 3 + 1}, ' + honest[1:]
    verdict = score(row, both)
    assert (verdict.score, verdict.status) == (0.0, "ok") and "hedge" in verdict.feedback
    assert score(row, both, TRUST).score == 0.0  # the reading refuses it whatever unsafe says


def test_a_case_hedge_is_a_hedge_but_the_exact_check_ignores_case(rows):
    row = rows("spell_backward")[0]
    gold = row["answer"]
    assert score(row, None, completion=f"<answer>{gold}</answer><answer>{gold.upper()}</answer>").score == 0.0
    assert score(row, gold.upper()).score == 1.0  # its scorer ignores case, and so does the check


def test_rows_made_with_a_config_are_scored_under_it(rows):
    """puzzle24's scorer refuses numbers above its config's max_value: 8 is fine by the defaults (1..10),
    not for rows made with max_value 5 (the check is the scorer's own, so unsafe: trust shows it)."""
    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    made = make_rows("puzzle24", size=3, seed=0, max_value=5)
    assert all(r["config"] == {"max_value": 5} for r in made)
    assert all(score(r, r["answer"]).score == 1.0 for r in made)
    default = {k: v for k, v in made[0].items() if k != "config"}
    assert score(default, "3*8*1*1", TRUST).score == 1.0
    assert score(made[0], "3*8*1*1", TRUST).score == 0.0
    bad = {**made[0], "config": {"no_such_option": 1}}
    assert score(bad, made[0]["answer"]).status == "invalid_input"


def test_composite_rows_are_scored_by_their_sub_datasets_under_their_own_config(rows):
    from reasoning_gym.composite import DatasetSpec

    from rewardsmith.verifiers.reasoning_gym.rows import make_rows

    specs = [DatasetSpec("chain_sum", 1, {}), {"name": "puzzle24", "weight": 1, "config": {"max_value": 5}}]
    made = make_rows("composite", size=6, seed=0, datasets=specs)
    names = {r["metadata"]["source_dataset"] for r in made}
    assert names == {"chain_sum", "puzzle24"}
    assert all(
        r.get("config") == ({"max_value": 5} if r["metadata"]["source_dataset"] == "puzzle24" else None) for r in made
    )
    assert all(score(json.loads(json.dumps(r)), r["answer"]).score == 1.0 for r in made)
