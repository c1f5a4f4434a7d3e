"""``qa``'s EM and F1 against torchmetrics' SQuAD metric (the official v1.1 rules) on the same rows.

The rows are our own: about forty questions' gold aliases (single words, names, numbers, phrases with
articles and punctuation), each answered in the shapes that matter to the metric: an alias exactly,
in upper and lower case, with an article, with punctuation around and inside it, with extra spaces,
cut short, with a word more, another question's answer, an empty answer, and golds that normalise to
nothing. Both sides score each (prediction, aliases) pair, max over aliases, in the same run:

* ours: ``rewardsmith.verifiers.qa.normalize`` (the metric functions), and the ``qa`` verifier end to
  end on ``The answer is <prediction>.`` with ``metric: em`` / ``f1`` (lists and length not refused,
  so the verifier's score is the metric's);
* the reference: torchmetrics' ``squad`` per-row functions, and its public ``squad()`` over all rows.

It prints agreement (every disagreement is listed, with which side follows the v1.1 script) and rows/s.

    python benchmarks/qa_parity.py [--repeat 20]

torchmetrics is in the ``bench`` extra (``pip install -e ".[bench]"``).
"""

from __future__ import annotations

import argparse
import random
import time

# question id -> gold aliases (our own; shapes SQuAD and TriviaQA rows carry)
GOLDS: list[list[str]] = [
    ["Paris", "City of Paris"],
    ["1066"],
    ["William Shakespeare", "Shakespeare"],
    ["the Beatles", "Beatles"],
    ["Washington, D.C.", "Washington DC"],
    ["Iron", "Fe"],
    ["Mount Everest", "Everest"],
    ["H2O", "water"],
    ["Albert Einstein", "Einstein"],
    ["the Pacific Ocean", "Pacific"],
    ["an apple"],
    ["A Tale of Two Cities"],
    ["U.S.A.", "United States", "USA"],
    ["Rock 'n' Roll", "rock and roll"],
    ["42"],
    ["3.14", "pi"],
    ["New York City", "NYC", "New York"],
    ["the Nile", "Nile River"],
    ["Marie Curie"],
    ["photosynthesis"],
    ["World War II", "WWII", "the Second World War"],
    ["Jupiter"],
    ["1,000", "one thousand"],
    ["St. Louis", "Saint Louis"],
    ["Leonardo da Vinci", "da Vinci"],
    ["oxygen"],
    ["The Great Gatsby"],
    ["Tokyo"],
    ["twenty-one", "21"],
    ["Mercury"],
    ["the Amazon rainforest", "Amazon"],
    ["Mozart"],
    ["Dr. Seuss", "Theodor Geisel"],
    ["the Renaissance"],
    ["Canberra"],
    ["blue whale"],
    ["Abraham Lincoln"],
    ["E = mc^2", "E=mc2"],
    ["the"],
    ["a"],
]


def predictions(aliases: list[str], other: str, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, prediction) for one question: exact, case, articles, punctuation, partial, wrong, empty."""
    gold = rng.choice(aliases)
    words = gold.split()
    made = [
        ("exact", gold),
        ("upper", gold.upper()),
        ("lower", gold.lower()),
        ("article", f"The {gold}"),
        ("an article", f"an {gold}"),
        ("punctuation around", f"'{gold}'!"),
        ("spaces", f"  {'   '.join(words)} "),
        ("punctuation inside", gold.replace(" ", "-")),
        ("one word more", f"{gold} city"),
        ("wrong", other),
        ("empty", ""),
        ("punctuation only", "?!"),
    ]
    if len(words) > 1:
        made.append(("cut short", words[0]))
        made.append(("last word", words[-1]))
    return made


def rows(seed: int = 0) -> list[tuple[str, str, list[str]]]:
    rng = random.Random(seed)
    out = []
    for i, aliases in enumerate(GOLDS):
        other = GOLDS[(i + 7) % len(GOLDS)][0]
        out += [(kind, pred, aliases) for kind, pred in predictions(aliases, other, rng)]
    return out


def ours(data: list[tuple[str, str, list[str]]]) -> list[tuple[float, float]]:
    from rewardsmith.verifiers.qa.normalize import exact_match, f1

    return [(max(exact_match(p, a) for a in golds), max(f1(p, a) for a in golds)) for _, p, golds in data]


def verifier_scores(data: list[tuple[str, str, list[str]]], metric: str) -> list[float | None]:
    """The ``qa`` verifier end to end; None where it states no answer (an empty prediction)."""
    from rewardsmith.verifiers import Sample, build

    spec = {"type": "qa", "metric": metric, "refuse_lists": False, "max_answer_words": 0}
    samples = [Sample(prompt="q", completion=f"<answer>{p}</answer>", fields={"answer": golds}) for _, p, golds in data]
    return [v.score if v.status == "ok" else None for v in build(spec).verify_batch(samples)]


def reference(data: list[tuple[str, str, list[str]]]) -> list[tuple[float, float]]:
    from torchmetrics.functional.text.squad import (
        _compute_exact_match_score,
        _compute_f1_score,
        _metric_max_over_ground_truths,
    )

    return [
        (
            float(_metric_max_over_ground_truths(_compute_exact_match_score, p, golds)),
            float(_metric_max_over_ground_truths(_compute_f1_score, p, golds)),
        )
        for _, p, golds in data
    ]


def reference_aggregate(data: list[tuple[str, str, list[str]]]) -> dict[str, float]:
    from torchmetrics.functional.text.squad import squad

    preds = [{"prediction_text": p, "id": str(i)} for i, (_, p, _) in enumerate(data)]
    target = [
        {"answers": {"text": golds, "answer_start": [0] * len(golds)}, "id": str(i)}
        for i, (_, _, golds) in enumerate(data)
    ]
    return {k: float(v) for k, v in squad(preds, target).items()}


def v11_says(prediction: str, golds: list[str]) -> str:
    """Which side the official v1.1 script agrees with where they differ (it returns F1 0 whenever no
    token is shared, also when both sides are empty; torchmetrics follows v2.0 there and returns 1)."""
    from rewardsmith.verifiers.qa.normalize import tokens

    both_empty = not tokens(prediction) and any(not tokens(g) for g in golds)
    return (
        "ours (v1.1: no shared token is F1 0; torchmetrics applies v2.0's empty-answer rule)"
        if both_empty
        else "unexplained: check by hand"
    )


def departure_reason(prediction: str, golds: list[str]) -> str:
    """Why the verifier scores a row other than SQuAD's functions do: only where it reads numbers as numbers."""
    from rewardsmith.verifiers.qa.match import is_number, key
    from rewardsmith.verifiers.qa.normalize import normalize

    if any(is_number(g) for g in golds):
        return "by design: a gold that is one number is matched only by that number (no partial F1)"
    if any(normalize(prediction) == normalize(g) and key(prediction) != key(g) for g in golds):
        return "by design: numbers are read as numbers (SQuAD drops the point and the sign)"
    return "unexplained: check by hand"


def timed(fn, repeat: int) -> tuple[object, float]:
    start = time.perf_counter()
    for _ in range(repeat):
        result = fn()
    return result, (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="timing repetitions")
    args = parser.parse_args()
    data = rows()
    mine, t_mine = timed(lambda: ours(data), args.repeat)
    theirs, t_theirs = timed(lambda: reference(data), max(1, args.repeat // 4))
    em_scores, t_em = timed(lambda: verifier_scores(data, "em"), max(1, args.repeat // 4))
    f1_scores = verifier_scores(data, "f1")
    print(f"{len(data)} rows ({len(GOLDS)} questions, {len(data) // len(GOLDS)} predictions each on average)")
    disagreements, departures = [], []
    for (kind, pred, golds), (em, f1), (ref_em, ref_f1), v_em, v_f1 in zip(
        data, mine, theirs, em_scores, f1_scores, strict=True
    ):
        if abs(em - ref_em) > 1e-9 or abs(f1 - ref_f1) > 1e-6:
            disagreements.append((kind, pred, golds, em, ref_em, f1, ref_f1))
        if v_em is not None and (abs(v_em - em) > 1e-9 or abs(v_f1 - f1) > 1e-6):
            departures.append((kind, pred, golds, v_em, em, v_f1, f1))
    agree = len(data) - len(disagreements)
    print(f"agreement, EM and F1, ours vs torchmetrics per row: {agree}/{len(data)} ({100 * agree / len(data):.1f}%)")
    for kind, pred, golds, em, ref_em, f1, ref_f1 in disagreements:
        print(
            f"  differs [{kind}] prediction {pred!r} golds {golds}: EM ours {em:g} / ref {ref_em:g}, "
            f"F1 ours {f1:.3f} / ref {ref_f1:.3f}; right: {v11_says(pred, golds)}"
        )
    stated = sum(s is not None for s in em_scores)
    print(
        f"the qa verifier end to end (EM and F1) equals the metric on {stated - len(departures)} of the {stated} rows "
        f"it scores; the other {len(data) - stated} are no_answer (an empty answer) or invalid_input (a gold empty "
        "once normalised)"
    )
    for kind, pred, golds, v_em, em, v_f1, f1 in departures:
        print(
            f"  departs [{kind}] prediction {pred!r} golds {golds}: EM verifier {v_em:g} / metric {em:g}, "
            f"F1 verifier {v_f1:.3f} / metric {f1:.3f}; why: {departure_reason(pred, golds)}"
        )
    aggregate = reference_aggregate(data)
    n = len(data)
    print(
        f"aggregate: ours EM {100 * sum(e for e, _ in mine) / n:.2f} F1 {100 * sum(f for _, f in mine) / n:.2f}; "
        f"torchmetrics squad() EM {aggregate['exact_match']:.2f} F1 {aggregate['f1']:.2f}"
    )
    print(
        f"rows/s: ours (metric) {n / t_mine:,.0f}, torchmetrics (per-row functions) {n / t_theirs:,.0f} "
        f"(ratio {t_theirs / t_mine:.1f}x); qa verifier end to end {n / t_em:,.0f}"
    )


if __name__ == "__main__":
    main()
