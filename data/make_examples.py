"""Write data/math_examples.jsonl and data/calibration_examples.jsonl.

math_examples.jsonl: questions with several completions each.

Every question gets completions of known kinds (``expect``): ``right`` in several
dresses (boxed, reformatted, tagged, GSM8K style), ``wrong``, ``unparseable``, and
one ``pathological`` answer that no grader can evaluate in time. Wrong ones include the
shapes a policy learns to game a lenient grader with: a hedge between two boxes, a
reordered pair, an inequality for a number, a multiplier word read as a unit. The README's first
command scores this file; tests check that each kind gets the verdict it should.

calibration_examples.jsonl: arithmetic and MATH-style questions whose completions state a
confidence (``<confidence>0.8</confidence>``, "Confidence: 80%", "confidence: 0.8",
"I am 80% confident"), some right, some wrong, some with no confidence or no answer.
``expect`` is ``right``, ``wrong`` or ``no_answer``; ``stated_confidence`` is the
confidence written into the completion (null when none, or when it is out of range), so
tests can check the ``brier`` reward (data/brier.yaml) row by row. The simulated model is
a little overconfident, so the reliability diagram has something to show.

Run ``python data/make_examples.py`` to regenerate (the output is deterministic).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (data_source, prompt, gold answer, completions as (expect, text))
QUESTIONS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    ("gsm8k", "Mia buys 3 packs of 6 pencils. How many pencils does she have?", "#### 18", [
        ("right", "3 packs of 6 is 3 * 6 = 18 pencils.\n#### 18"),
        ("right", "She has 3 x 6 = 18 pencils in total, so the answer is 18."),
        ("right", "<think>3 times 6</think>\n<answer>18</answer>"),
        ("wrong", "3 + 6 = 9, so she has 9 pencils.\n#### 9"),
        ("unparseable", "Hard to say without knowing the pack sizes."),
    ]),
    ("gsm8k", "A shirt costs $20 and is 25% off. What is the sale price in dollars?", "15", [
        ("right", "25% of 20 is 5, so the price is 20 - 5 = 15 dollars.\n#### 15"),
        ("right", "The final answer is $15."),
        ("wrong", "25% of 20 is 4, so it costs $16.\n#### 16"),
    ]),
    ("math", "Simplify $\\frac{6}{8}$.", "\\frac{3}{4}", [
        ("right", "Divide top and bottom by 2: $\\boxed{\\frac{3}{4}}$."),
        ("right", "6/8 = 0.75, so the answer is $\\boxed{0.75}$."),
        ("right", "Answer: 3/4"),
        ("wrong", "Dividing by 3 gives $\\boxed{\\frac{2}{3}}$."),
        ("unparseable", "The answer is $\\boxed{\\weird{3}{4}}$."),
    ]),
    ("math", "Evaluate $\\sin(\\pi/4)$.", "$\\frac{\\sqrt{2}}{2}$", [
        ("right", "$\\sin(\\pi/4) = \\boxed{\\frac{\\sqrt{2}}{2}}$"),
        ("right", "It equals $\\frac{1}{\\sqrt{2}}$, i.e. $\\boxed{\\frac{1}{\\sqrt2}}$."),
        ("right", "The answer is sqrt(2)/2."),
        ("wrong", "It is $\\boxed{\\frac{\\sqrt{3}}{2}}$."),
    ]),
    ("math", "For which $k$ is $k + 5 < 0$?", "k < -5", [
        ("right", "Subtract 5: $\\boxed{(-\\infty, -5)}$."),
        ("right", "So $\\boxed{k < -5}$."),
        ("wrong", "So $\\boxed{(-5, \\infty)}$."),
    ]),
    ("math", "Solve $2x - 4 = 0$.", "x=2", [
        ("right", "$2x = 4$, so $\\boxed{x = 2}$."),
        ("right", "The final answer is $2$."),
        ("wrong", "$\\boxed{x=-2}$"),
        ("wrong", "It is $\\boxed{2}$ or maybe $\\boxed{-2}$."),  # a hedge: every box counts
        ("wrong", "So $\\boxed{x \\le 2}$."),  # a relation is not its bound
    ]),
    ("math", "What percent of 80 is 20?", "25\\%", [
        ("right", "20/80 = 1/4 = $\\boxed{25\\%}$"),
        ("right", "That is a quarter: $\\boxed{0.25}$."),
        ("wrong", "$\\boxed{40\\%}$"),
    ]),
    ("math", "Write $\\frac{8}{3}$ as a mixed number.", "2\\frac{2}{3}", [
        ("right", "$\\boxed{2\\frac{2}{3}}$"),
        ("right", "$\\boxed{\\frac{8}{3}}$"),
        ("wrong", "$\\boxed{2\\frac{1}{3}}$"),
    ]),
    ("math", "Find all roots of $(x-1)(x-2)=0$.", "1, 2", [
        ("right", "The roots are $\\boxed{2, 1}$."),
        ("right", "$\\boxed{\\{1, 2\\}}$"),
        ("wrong", "$\\boxed{1, 3}$"),
        ("wrong", "One root is $\\boxed{1}$."),  # a part of the answer is not the answer
    ]),
    ("math", "Each interior angle of an equilateral triangle measures how many degrees?", "60^\\circ", [
        ("right", "$180/3 = \\boxed{60^\\circ}$"),
        ("right", "The answer is 60 degrees."),
        ("wrong", "$\\boxed{90^\\circ}$"),
    ]),
    ("math", "Which is prime? (A) 21 (B) 23 (C) 25 (D) 27", "(B)", [
        ("right", "23 has no divisors but 1 and itself. The answer is (B)."),
        ("right", "$\\boxed{B}$"),
        ("wrong", "The answer is (C)."),
    ]),
    ("math", "What is the last digit of $5^5$?", "5", [
        ("right", "Every power of 5 ends in 5: $\\boxed{5}$."),
        ("wrong", "It is $\\boxed{5 \\text{ thousand}}$."),  # a multiplier word is not a unit
        ("pathological", "It is $\\boxed{\\int_0^1 e^{x^{3}} \\sin(x^{5}) \\, dx}$"),
    ]),
]


def rows() -> list[dict[str, str]]:
    out = []
    for q, (source, prompt, answer, completions) in enumerate(QUESTIONS):
        for expect, completion in completions:
            out.append({
                "id": f"q{q:02d}-{len([r for r in out if r['id'].startswith(f'q{q:02d}')])}",
                "data_source": source,
                "prompt": prompt,
                "completion": completion,
                "answer": answer,
                "expect": expect,
            })
    return out


CONFIDENCE_STYLES = (
    "<think>{work}</think>\n<answer>{answer}</answer>\n<confidence>{q}</confidence>",
    "{work}. The answer is {answer}.\nConfidence: {pct}%",
    "{work}.\n#### {answer}\nconfidence: {q}",
    "{work}, so the answer is $\\boxed{{{answer}}}$. I am {pct}% confident.",
)

# Hand-written rows for the edge cases: (prompt, gold, completion, expect, stated confidence)
CALIBRATION_EDGE_CASES: list[tuple[str, str, str, str, float | None]] = [
    ("Simplify $\\frac{6}{8}$.", "\\frac{3}{4}",
     "Divide by 2: $\\boxed{\\frac{3}{4}}$.\n<confidence>0.9</confidence>", "right", 0.9),
    ("Evaluate $\\sin(\\pi/4)$.", "$\\frac{\\sqrt{2}}{2}$",
     "It is $\\boxed{\\frac{\\sqrt{3}}{2}}$.\nConfidence: 95%", "wrong", 0.95),
    ("Solve $2x - 4 = 0$.", "x=2", "$\\boxed{x = 2}$", "right", None),
    ("What is 7 times 8?", "56", "7 times 8 is 54.\n#### 54", "wrong", None),
    ("What is 12 plus 30?", "42", "I could not work it out. Confidence: 20%", "no_answer", 0.2),
    ("What is 9 times 9?", "81", "$\\boxed{81}$\nConfidence: 150%", "right", None),
    ("What is 15 minus 6?", "9", "<answer>9</answer>\n<confidence>very high</confidence>", "right", None),
]


def calibration_rows(n: int = 60, seed: int = 20261122) -> list[dict[str, object]]:
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    for i in range(n):
        a, b = rng.randint(2, 40), rng.randint(2, 40)
        op = rng.choice(["plus", "times", "minus"])
        value = {"plus": a + b, "times": a * b, "minus": a - b}[op]
        symbol = {"plus": "+", "times": "*", "minus": "-"}[op]
        q = rng.choice([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0])
        right = rng.random() < max(0.0, q - 0.15)  # a little overconfident
        answer = value if right else value + rng.choice([-10, -2, -1, 1, 2, 10])
        style = CONFIDENCE_STYLES[i % len(CONFIDENCE_STYLES)]
        completion = style.format(work=f"{a} {symbol} {b} = {answer}", answer=answer, q=q, pct=round(q * 100))
        out.append({
            "id": f"c{i:02d}", "data_source": "arithmetic", "prompt": f"What is {a} {op} {b}?",
            "completion": completion, "answer": str(value),
            "expect": "right" if right else "wrong", "stated_confidence": q,
        })
    for j, (prompt, gold, completion, expect, q) in enumerate(CALIBRATION_EDGE_CASES):
        out.append({
            "id": f"e{j:02d}", "data_source": "math", "prompt": prompt, "completion": completion,
            "answer": gold, "expect": expect, "stated_confidence": q,
        })
    return out


def write_jsonl(path: Path, records: list[dict[str, object]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in records:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} rows to {path}")


def main() -> None:
    write_jsonl(HERE / "math_examples.jsonl", rows())
    write_jsonl(HERE / "calibration_examples.jsonl", calibration_rows())


if __name__ == "__main__":
    main()
