"""Write data/math_cases.jsonl: a blind, hand-labelled test set for the ``math`` verifier.

Every row is one (gold, completion) pair labelled the way a strict human grader of
competition math would label it. The cases were written without reading the verifier,
so they can check it against cases its author did not write. Rows look like::

    {"id": "hedging-0", "class": "hedging", "gold": "4", "completion": "...",
     "correct": false, "note": "two boxed values"}

Optional keys: ``method`` (the extraction method a verifier should report:
answer_tag, boxed, phrase, gsm8k, last_number), ``options`` (verifier options, e.g.
``{"last_number": false}``) and, for the ``grader_crash`` class, ``status_not``: the
status the verdict must not have (``"error"``: a crash must score 0 as no_answer,
timeout or a plain wrong answer).

``gold`` is an answer string as datasets store it; ``completion`` is a whole model
completion. Classes with a false-positive theme have more false rows than true ones.

Run ``python data/make_math_cases.py`` to regenerate (the output is deterministic).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "math_cases.jsonl"


def case(gold: str, completion: str, correct: bool, note: str, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"gold": gold, "completion": completion, "correct": correct}
    row.update(extra)
    row["note"] = note
    return row


NO_LAST = {"last_number": False}
LAST_ON = {"last_number": True}  # the last-number fallback is opt-in
OPENED = {"prompt_opens_think": True}  # the chat template ends the prompt with <think>

# Every statement of the chosen form counts; repeating one value is fine.
HEDGING = [
    case(r"4", r"Both roots are positive, so the answer is $\boxed{3}$ or $\boxed{4}$.", False, "two boxed values"),
    case(r"4", r"We get $x^2 = 16$ and $x > 0$, so $x = \boxed{4}$. As a decimal, $\boxed{4.0}$.", True,
         "same value boxed twice"),
    case(r"4", r"<answer>4</answer>" "\n" r"Actually, on reflection: <answer>3</answer>", False,
         "two answer tags, different values"),
    case(r"4", r"<answer>4</answer>" "\n" r"To restate: <answer>4</answer>", True, "two answer tags, same value"),
    case(r"4", r"Counting the lattice points on each side, the answer is 3 or 4.", False, "phrase with 'or'"),
    case(r"4", r"Each side contributes one point, so the total is $\boxed{4}$." "\n\n" r"The final answer is 5.", False,
         "boxed then a different final answer"),
    case(r"4", r"Each side contributes one point, so the total is $\boxed{4}$." "\n\n" r"The final answer is 4.", True,
         "boxed then the same final answer"),
    case(r"4", r"The set of solutions is $\boxed{3, 4}$.", False, "superset of the single gold value"),
    case(r"4", r"The number of solutions is $\boxed{4 \text{ or } 3}$.", False, "'or' inside the box"),
    case(r"4", r"Depending on whether $0$ counts, the answer is either $\boxed{3}$ or $\boxed{4}$.", False,
         "explicit either/or"),
    case(r"4", r"So $n = \boxed{4}$." "\n\n"
         r"Alternatively, if we count the empty subset as well, the answer would be $\boxed{5}$.", False,
         "alternative boxed answer"),
    case(r"4", r"Since $|x| = 4$, we have $x = \boxed{\pm 4}$.", False, "plus-minus is two values"),
    case(r"4", r"The side length is $\boxed{\frac{8}{2}}$, which simplifies to $\boxed{4}$.", True,
         "same value in two forms"),
    case(r"4", r"Adding up, $1 + 3 = 4$, so the answer is $\boxed{4}$.", True, "single boxed answer"),
    case(r"4", r"Therefore the answer is $\boxed{4}$." "\n\n"
         r"Final Answer: The final answer is $4$. I hope it is correct.", True,
         "Minerva style restatement of the same value"),
    case(r"4", r"So $k = \boxed{4}$." "\n\n" r"Hmm, wait. Let me recount... actually it should be $\boxed{5}$.", False,
         "changed mind outside think, both boxed"),
    case(r"12", r"At first I got $\boxed{10}$, but that double counts the corners. "
         r"Correcting, the answer is $\boxed{12}$.", False, "discarded boxed value still counts"),
    case(r"#### 18", r"3 packs of 6 is 18 pencils." "\n" r"#### 18" "\n" r"#### 20", False, "two GSM8K markers"),
    case(r"#### 18", r"3 packs of 6 is 3 * 6 = 18 pencils." "\n" r"#### 18", True, "one GSM8K marker"),
    case(r"#### 18", r"3 * 6 = 18, but she may also get 2 free ones." "\n" r"#### 18 or 20", False, "GSM8K with 'or'"),
    case(r"\frac{1}{2}", r"The probability is $\boxed{0.5}$ (or maybe $\boxed{\frac{1}{3}}$ if order matters).", False,
         "parenthetical second box"),
    case(r"42", r"Answer: 42 or 43", False, "'Answer:' with two values"),
    case(r"42", r"<answer>42 or 43</answer>", False, "two values inside one answer tag"),
    case(r"1, 2", r"Factoring, $(x-1)(x-2) = 0$, so $x = \boxed{1}$ and $x = \boxed{2}$.", True,
         "both roots of a two-root gold"),
    case(r"1, 2", r"The roots are $\boxed{1}$, $\boxed{2}$, and $\boxed{3}$.", False, "superset of the roots"),
    case(r"7", r"Hence $m = 7$, and the answer is $\boxed{7}$." "\n\n" r"**Final Answer**" "\n" r"The answer is 7.",
         True, "restated, same value"),
]

# Tuples, points, vectors and intervals keep their order; sets and solution lists do not.
ORDER = [
    case(r"(6,7)", r"Solving the system gives the point $\boxed{(7,6)}$.", False, "swapped ordered pair"),
    case(r"(6,7)", r"Solving the system gives the point $\boxed{(6,7)}$.", True, "same ordered pair"),
    case(r"(6, 7)", r"The intersection is $\boxed{\left(6, 7\right)}$.", True, "\\left( \\right) around the pair"),
    case(r"\{1,3\}", r"The solutions form the set $\boxed{(3,1)}$.", False, "set is not a tuple"),
    case(r"\{1,3\}", r"The solution set is $\boxed{\{3,1\}}$.", True, "set in another order"),
    case(r"(1,3)", r"The answer is $\boxed{(3,1)}$.", False, "(3,1) is neither the tuple nor the interval (1,3)"),
    case(r"[1,3)", r"So $x$ lies in $\boxed{(1,3]}$.", False, "brackets swapped"),
    case(r"[1,3)", r"So $x$ lies in $\boxed{[1,3)}$.", True, "same half-open interval"),
    case(r"1, 2, 3", r"The integer solutions are $\boxed{3, 2, 1}$.", True, "solution list in another order"),
    case(r"x=1, x=2", r"The solutions are $\boxed{x=2, x=1}$.", True, "named solution list in another order"),
    case(r"\begin{pmatrix}1\\2\\3\end{pmatrix}", r"The vector is $\boxed{\begin{pmatrix}3\\2\\1\end{pmatrix}}$.", False,
         "reversed vector"),
    case(r"(2,-1)", r"The center of the circle is $\boxed{(-1, 2)}$.", False, "swapped center coordinates"),
    case(r"(2,-1)", r"Completing the square, the center is at <answer>(2, -1)</answer>", True, "same point"),
    case(r"(-\infty, 3]", r"The solution set is $\boxed{(-\infty, 3]}$.", True, "same interval"),
    case(r"-2, 5", r"The roots are $\boxed{5, -2}$.", True, "two roots in another order"),
    case(r"(3,1)", r"The set of values is $\boxed{\{1,3\}}$.", False, "set is not the ordered pair"),
    case(r"[-2, 4]", r"The range is $\boxed{[4, -2]}$.", False, "reversed interval endpoints"),
    case(r"(0, 1) \cup (2, 3)", r"The function is positive on $\boxed{(2,3) \cup (0,1)}$.", True,
         "union is commutative"),
    case(r"(5, 12)", r"The legs are 5 and 12, so the answer is $(12, 5)$.", False, "swapped pair in a phrase"),
    case(r"\{1,3\}", r"Both $x=1$ and $x=3$ work, so the answer is $\boxed{1, 3}$.", True, "list equals the set"),
    case(r"(1,2)", r"Thus $(a,b) = \boxed{(2,1)}$.", False, "swapped pair"),
    case(r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}", r"The projection is $\boxed{(2,-1)}$.", True,
         "vector as a tuple, same order"),
    case(r"(\frac{1}{2}, 3)", r"The vertex is at $\boxed{\left(3, \frac{1}{2}\right)}$.", False, "swapped vertex"),
    case(r"(1,2,3)", r"The ordered triple is $\boxed{(1,3,2)}$.", False, "permuted triple"),
]

# Undefined values are never equal to anything; times and ratios compare as themselves.
UNDEFINED = [
    case(r"\frac{5}{0}", r"Plugging in gives $\boxed{\frac{5}{0}}$.", False, "two undefined values are not equal"),
    case(r"0/0", r"The expression becomes $\boxed{0/0}$.", False, "0/0 is undefined"),
    case(r"\frac{1}{0}", r"So the slope is $\boxed{\frac{2}{0}}$.", False, "different division by zero"),
    case(r"12:00", r"The train arrives at $\boxed{3:00}$.", False, "different time"),
    case(r"12:00", r"Adding 4 hours to 8:00 gives $\boxed{12:00}$.", True, "same time"),
    case(r"1:2", r"The ratio of the areas is $\boxed{2:1}$.", False, "ratio reversed"),
    case(r"1:2", r"The ratio of the areas is $\boxed{1:2}$.", True, "same ratio"),
    case(r"3:00", r"Two hours after 1:00 is 3:00. The answer is 3:00", True, "time in a phrase"),
    case(r"12:00", r"The clock shows $\boxed{5:00}$.", False, "x:00 is not a division by zero"),
    case(r"12:00", r"The hands overlap at $\boxed{\frac{1}{0}}$.", False, "a time is not 12/0"),
    case(r"10:30", r"The meeting starts at $\boxed{10:30}$.", True, "same time"),
    case(r"10:30", r"The meeting starts at $\boxed{10:3}$.", False, "10:3 is not 10:30"),
    case(r"10:30", r"The meeting starts at $\boxed{1030}$.", False, "a number is not the time"),
    case(r"\text{undefined}", r"The denominator vanishes, so the expression is $\boxed{\text{undefined}}$.", True,
         "same word"),
    case(r"\infty", r"The limit is $\boxed{\frac{1}{0}}$.", False, "1/0 is not infinity"),
    case(r"0", r"The limit is $\boxed{0/0}$.", False, "0/0 is not 0"),
    case(r"5", r"So $f(2) = \boxed{\frac{5}{0}}$.", False, "5/0 is not 5"),
    case(r"\frac{5}{0}", r"So $f(2) = \boxed{\infty}$.", False, "undefined gold matches nothing"),
    case(r"4:5", r"The ratio of boys to girls is $4:5$." "\n" r"Answer: 4:5", True, "same ratio"),
    case(r"0/0", r"Direct substitution gives $\boxed{\frac{1}{0}}$.", False, "two different undefined values"),
    case(r"1:2", r"The ratio is $\boxed{1:3}$.", False, "different ratio"),
    case(r"12:00", r"Half an hour later the clock shows $\boxed{12:30}$.", False, "different time"),
    case(r"9:45", r"Leaving at 9:15 and walking 30 minutes, she arrives at 9:45." "\n" r"Answer: 9:45", True,
         "time after 'Answer:'"),
    case(r"2:3", r"The ratio is $\boxed{3:2}$.", False, "ratio reversed"),
]

# A relation is not its bound; an inequality equals the interval it describes.
RELATION_BOUND = [
    case(r"5", r"The only excluded value is 5, so $\boxed{x \neq 5}$.", False, "x != 5 is not 5"),
    case(r"5", r"The domain requires $\boxed{x != 5}$.", False, "ASCII != is not 5"),
    case(r"2", r"The inequality holds for $\boxed{x \le 2}$.", False, "x <= 2 is not 2"),
    case(r"5", r"Solving $2x - 3 < 7$ gives $x < 5$.", False, "last number is a bound"),
    case(r"5", r"The minimum is reached once $\boxed{x \geq 5}$.", False, "x >= 5 is not 5"),
    case(r"[5, \infty)", r"Solving, we need $\boxed{x \geq 5}$.", True, "inequality equals the interval"),
    case(r"x \geq 5", r"The solution set is $\boxed{[5,\infty)}$.", True, "interval equals the inequality"),
    case(r"5", r"Solving $2x = 10$ gives $\boxed{x = 5}$.", True, "x = 5 is 5"),
    case(r"x<5", r"The solution set is $\boxed{(-\infty, 5)}$.", True, "interval equals the inequality"),
    case(r"x<5", r"The solution set is $\boxed{x \le 5}$.", False, "strictness differs"),
    case(r"(-\infty, 5)", r"Subtracting 3 from both sides, the answer is $x<5$.", True, "inequality in a phrase"),
    case(r"2", r"The function is decreasing there." "\n" r"Answer: $x \le 2$", False, "'Answer:' with a relation"),
    case(r"3", r"Every $n$ from 3 on works, so <answer>n \geq 3</answer>", False, "relation in answer tag"),
    case(r"3", r"The smallest such $n$ is <answer>n = 3</answer>", True, "equation in answer tag"),
    case(r"-3 < x < 2", r"Both factors are negative between the roots: $\boxed{(-3,2)}$.", True,
         "double inequality equals open interval"),
    case(r"-3 < x < 2", r"Both factors are negative between the roots: $\boxed{[-3,2]}$.", False, "closed vs open"),
    case(r"10", r"The smallest such $n$ satisfies $n \ge 10$." "\n" r"Final answer: $n \ge 10$", False,
         "final answer is a relation"),
    case(r"10", r"The smallest possible value of $n$ is $\boxed{10}$.", True, "plain value"),
    case(r"5", r"So the answer is $\boxed{x > 5}$.", False, "x > 5 is not 5"),
    case(r"5", r"So the answer is $\boxed{5 \leq x}$.", False, "bound on the left is still a relation"),
    case(r"x \le 2", r"Therefore $\boxed{x \leq 2}$.", True, "same inequality"),
    case(r"(-\infty, 5) \cup (5, \infty)", r"The only excluded point is 5, so the domain is $\boxed{x \neq 5}$.", True,
         "x != 5 equals the punctured line"),
    case(r"4", r"Combining the cases, $k \leq 4$.", False, "last number is a bound"),
    case(r"7", r"Thus the largest integer is $\boxed{x < 7}$.", False, "strict bound is not the value"),
    case(r"x > 1", r"Taking logs, the answer is $\boxed{(1, \infty)}$.", True, "interval equals the inequality"),
]

# Only real units of measure and currency are dropped; words that change the value are not.
UNIT_WORDS = [
    case(r"5", r"The population grew by $\boxed{5 \text{ thousand}}$.", False, "thousand changes the value"),
    case(r"2", r"She bought $\boxed{2 \text{ dozen}}$.", False, "dozen changes the value"),
    case(r"5", r"The area is $\boxed{5 \text{ squared}}$.", False, "squared changes the value"),
    case(r"3", r"The prize is $\boxed{3 \text{ million}}$.", False, "million changes the value"),
    case(r"2", r"Cutting the pie gives $\boxed{2 \text{ halves}}$.", False, "halves is not a unit"),
    case(r"5", r"The answer is $\boxed{5 \text{ but maybe 7}}$.", False, "hedge hidden in text"),
    case(r"5", r"She needs $\boxed{5 \text{ at least}}$.", False, "qualifier changes the claim"),
    case(r"5", r"We need $\boxed{5 \text{ or more}}$.", False, "a lower bound, not 5"),
    case(r"10", r"The side of the square is $\boxed{10\text{ cm}}$.", True, "length unit"),
    case(r"18", r"She spends 3 * 6 = 18 dollars. The answer is 18 dollars.", True, "currency word"),
    case(r"18", r"The total cost is $\boxed{\$18}$.", True, "dollar sign"),
    case(r"5", r"His average speed is $\boxed{5 \text{ km/h}}$.", True, "speed unit"),
    case(r"3", r"The trip takes 180 / 60 = 3 hours." "\n" r"Answer: 3 hours", True, "time unit"),
    case(r"12", r"The area of the rectangle is $\boxed{12 \text{ cm}^2}$.", True, "area unit"),
    case(r"30", r"The smallest angle of the triangle is $\boxed{30^\circ}$.", True, "degree sign"),
    case(r"30^\circ", r"The smallest angle is $\boxed{30}$.", True, "degree sign on the gold"),
    case(r"5", r"Altogether the town has 5 thousand residents, so the answer is 5 thousand.", False,
         "thousand in a phrase"),
    case(r"4", r"The side of the square is 4, so its area is 4 squared. The answer is 4 squared.", False,
         "squared in a phrase"),
    case(r"7", r"The ladder reaches $\boxed{7\text{ m}}$ up the wall.", True, "metre unit"),
    case(r"45", r"The movie lasts $\boxed{45 \text{ minutes}}$.", True, "minutes"),
    case(r"#### 120", r"He earns 15 * 8 = 120 dollars." "\n" r"#### $120", True, "dollar sign after ####"),
    case(r"5", r"The bag weighs $\boxed{5 \text{ kg}}$.", True, "mass unit"),
    case(r"6", r"The radius is $\boxed{6 \text{ inches}}$.", True, "imperial unit"),
    case(r"5", r"The answer is $\boxed{5 \text{ hundred}}$.", False, "hundred changes the value"),
    case(r"8", r"The world population is about $\boxed{8 \text{ billion}}$.", False, "billion changes the value"),
    case(r"5", r"The answer is $\boxed{5 \text{ (or possibly 6)}}$.", False, "hedge hidden in text"),
    case(r"1.5", r"The jug holds $\boxed{1.5 \text{ L}}$.", True, "volume unit"),
]

# Integers compare exactly; a 1e-6 relative tolerance applies only to non-integer decimal golds.
INTEGER_TOLERANCE = [
    case(r"1000000", r"The product is $\boxed{1000000.5}$.", False, "integer gold, off by 0.5"),
    case(r"1000000", r"The sum is approximately $\boxed{999999.9999}$.", False, "integer gold, near miss"),
    case(r"2.5", r"Numerically, $\boxed{2.5000001}$.", True, "decimal gold, within 1e-6"),
    case(r"\frac{1}{3}", r"The probability is $\boxed{0.333333}$.", False, "rounded decimal for an exact fraction"),
    case(r"\sqrt 2", r"The diagonal is $\boxed{1.41421356}$.", False, "rounded decimal for a surd"),
    case(r"1000000", r"The count is $\boxed{1,000,000}$.", True, "thousands separators"),
    case(r"7", r"So $n = \boxed{7.0}$.", True, "7.0 is exactly 7"),
    case(r"7", r"So $n = \boxed{7.0000001}$.", False, "integer gold, tiny excess"),
    case(r"7", r"So $n = \boxed{6.9999999}$.", False, "integer gold, tiny deficit"),
    case(r"(3, 5)", r"The point is $\boxed{(3, 5.0000001)}$.", False, "integer inside a tuple"),
    case(r"[2, 5)", r"The interval is $\boxed{[2.0000001, 5)}$.", False, "integer endpoint of an interval"),
    case(r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}",
         r"The inverse is $\boxed{\begin{pmatrix} 1.0000001 & 0 \\ 0 & 1 \end{pmatrix}}$.", False,
         "integer entry of a matrix"),
    case(r"0.125", r"The probability is $\boxed{\frac{1}{8}}$.", True, "exact fraction for a decimal"),
    case(r"0.1", r"The rate is $\boxed{0.1000000001}$.", True, "decimal gold, within 1e-6"),
    case(r"0.1", r"The rate is $\boxed{0.1001}$.", False, "decimal gold, outside tolerance"),
    case(r"3.14", r"The ratio is $\boxed{\pi}$.", False, "pi is not 3.14 to 1e-6"),
    case(r"2.5", r"The mean is $\boxed{\frac{5}{2}}$.", True, "exact equal"),
    case(r"123456789", r"The total is $\boxed{123456788}$.", False, "large integer off by one"),
    case(r"0", r"The remainder is $\boxed{0.0000001}$.", False, "integer zero, tiny value"),
    case(r"0", r"The limit is $\boxed{10^{-400}}$.", False, "integer zero, very tiny value"),
    case(r"\frac{1}{3}", r"The probability is $\boxed{0.\overline{3}}$.", True, "repeating decimal is exact"),
    case(r"1.5", r"The answer is $\boxed{1.50}$.", True, "trailing zero"),
    case(r"2", r"The side is $\boxed{\sqrt{4}}$.", False, "exact value, not final (issue 36): a square under the root"),
    case(r"2", r"The side is $\boxed{1.9999999999}$.", False, "integer gold, near miss"),
    case(r"12.5", r"The average is $\boxed{12.5000000001}$.", True, "decimal gold, within 1e-6"),
    case(r"12.5", r"The average is $\boxed{12.51}$.", False, "decimal gold, outside tolerance"),
    case(r"\pi", r"The area is $\boxed{3.14159265}$.", False, "rounded decimal for pi"),
    case(r"1000000", r"That is $\boxed{10^6}$.", False, "power of ten, not final (issue 36): a power the gold lacks"),
    case(r"#### 100", r"The total is 4 * 25 = 100.00 dollars." "\n" r"#### 100.00", True, "100.00 is exactly 100"),
]

# Multi-part golds are read whole: all parts (any order) are right, a part is wrong.
MULTIPART_GOLD = [
    case(r"$8$,$4$", r"The two possible values are $\boxed{8, 4}$.", True, "both parts"),
    case(r"$8$,$4$", r"The two possible values are $\boxed{4, 8}$.", True, "both parts, other order"),
    case(r"$8$,$4$", r"The larger value is $\boxed{8}$.", False, "one part only"),
    case(r"$1$ and $2$ and $3$", r"The solutions are $\boxed{1, 2, 3}$.", True, "all three"),
    case(r"$1$ and $2$ and $3$", r"The solutions are $\boxed{1, 2}$.", False, "subset"),
    case(r"$1$ and $2$ and $3$", r"The solutions are $\boxed{1, 2, 3, 4}$.", False, "superset"),
    case(r"\boxed{1} and \boxed{2}", r"So $x = \boxed{2}$ and $x = \boxed{1}$.", True, "both boxed, other order"),
    case(r"\boxed{1} and \boxed{2}", r"So $x = \boxed{1}$.", False, "one of two"),
    case(r"$a=2$, $a=-6-4\sqrt2$", r"Hence $\boxed{a=2, a=-6-4\sqrt{2}}$.", True, "both named values"),
    case(r"$a=2$, $a=-6-4\sqrt2$", r"Hence $a = \boxed{2}$.", False, "one of two named values"),
    case(r"$a=2$, $a=-6-4\sqrt2$", r"The values are $\boxed{-6-4\sqrt{2}, 2}$.", True, "bare values of a named gold"),
    case(r"$8$,$4$", r"Checking both cases, the final answer is $8, 4$.", True, "both parts in a phrase"),
    case(r"$8$,$4$", r"<answer>8 and 4</answer>", True, "both parts joined by 'and'"),
    case(r"$8$,$4$", r"<answer>8</answer>", False, "one part in a tag"),
    case(r"$-1$, $3$", r"Factoring gives $(x+1)(x-3)=0$, so $\boxed{x=-1 \text{ or } x=3}$.", True,
         "solution list joined by 'or'"),
    case(r"$-1$, $3$", r"The roots are $\boxed{-1}$, $\boxed{3}$.", True, "two boxes"),
    case(r"$-1$, $3$", r"The roots are $\boxed{-1}$, $\boxed{3}$, $\boxed{5}$.", False, "extra root"),
    case(r"2, 3", r"The solution set is $\boxed{\{2,3\}}$.", True, "set of the listed values"),
    case(r"$1$ and $2$ and $3$", r"The smallest solution is $\boxed{1}$.", False, "one of three"),
    case(r"$8$,$4$", r"The answer is $\boxed{84}$.", False, "digits glued together"),
    case(r"$\frac{1}{2}$, $-3$", r"The roots are $\boxed{-3, \frac{1}{2}}$.", True, "both, other order"),
    case(r"$\frac{1}{2}$, $-3$", r"The positive root is $\boxed{\frac{1}{2}}$.", False, "one of two"),
    case(r"\boxed{1} and \boxed{2}", r"The roots are $\boxed{1, 2, 3}$.", False, "superset"),
    case(r"$a=2$, $a=-6-4\sqrt2$", r"Hence $\boxed{a=2}$.", False, "one named value"),
    case(r"$8$,$4$", r"The values are $\boxed{8, -4}$.", False, "wrong sign on one part"),
]

# The named side of an answer equation must be a symbol, function or tuple of symbols.
EQUATION_HEDGE = [
    case(r"4", r"The answer is $\boxed{3=4}$.", False, "false equation of numbers"),
    case(r"4", r"The answer is $\boxed{x=3=4}$.", False, "chain whose sides disagree"),
    case(r"5", r"The answer is $\boxed{2+3=5}$.", False, "arithmetic identity, nothing named"),
    case(r"5", r"The answer is $\boxed{a+b=5}$.", False, "named side is an expression"),
    case(r"2", r"So $\boxed{x = \frac{4}{2} = 2}$.", True, "chain whose sides agree"),
    case(r"4", r"So $\boxed{x = 4}$.", True, "named value"),
    case(r"4", r"So $\boxed{x = 2 + 2 = 4}$.", True, "agreeing chain"),
    case(r"4", r"So $\boxed{x = 4 = 5}$.", False, "chain whose sides disagree"),
    case(r"4", r"So $\boxed{x = 2^2 = 4}$.", True, "agreeing chain with a power"),
    case(r"4", r"So $\boxed{x = 2 + 2 = 5}$.", False, "chain ending in a wrong value"),
    case(r"6", r"Therefore $\boxed{3 \cdot 2 = 6}$.", False, "arithmetic identity, nothing named"),
    case(r"6", r"Therefore $\boxed{n = 6}$.", True, "named value"),
    case(r"12", r"The answer is $x + y = 12$.", False, "named side is an expression"),
    case(r"4", r"The answer is $\boxed{4 = 3}$.", False, "false equation of numbers"),
    case(r"3", r"Squaring both sides, $\boxed{x^2 = 9}$.", False, "unsolved equation"),
    case(r"3", r"Collecting terms, $\boxed{2x = 6}$.", False, "unsolved equation"),
    case(r"3", r"Hence $\boxed{x = \sqrt{9} = 3}$.", True, "agreeing chain with a root"),
    case(r"5", r"Adding, $\boxed{a + b = 2 + 3 = 5}$.", False, "named side is an expression"),
    case(r"8", r"The sum is $\boxed{S = 8}$.", True, "named value"),
    case(r"8", r"The sum is $\boxed{S = 3 + 5 = 8}$.", True, "agreeing chain"),
    case(r"8", r"The sum is $\boxed{S_{10} = 8}$.", True, "subscripted name"),
    case(r"8", r"The sum is $\boxed{S = 8 = 9}$.", False, "chain whose sides disagree"),
    case(r"1", r"So $\boxed{0 = 1}$.", False, "false equation"),
    case(r"1", r"So $\boxed{x = 1 = y = 2}$.", False, "chain with two values"),
    case(r"2", r"The final answer is $x = 2 = 3$.", False, "disagreeing chain in a phrase"),
    case(r"2", r"<answer>x = 6/3 = 2</answer>", True, "agreeing chain in a tag"),
]

# Named golds accept the bare value; functions match up to renaming the variable only.
NAMED_EQUATION = [
    case(r"g(x)=x^2-2x+2", r"Therefore the function is $\boxed{x^2-2x+2}$.", True, "bare value for named gold"),
    case(r"x^2-2x+2", r"Therefore $\boxed{g(x)=x^2-2x+2}$.", True, "named answer for bare gold"),
    case(r"(p,q)=(3,2)", r"The only prime pair is $\boxed{(3,2)}$.", True, "bare tuple for named gold"),
    case(r"(p,q)=(3,2)", r"The only prime pair is $\boxed{(2,3)}$.", False, "swapped tuple"),
    case(r"(3,2)", r"So $\boxed{(p,q)=(3,2)}$.", True, "named tuple for bare gold"),
    case(r"f(x)=x", r"The only solution is $\boxed{f(z)=z}$.", True, "variable renamed"),
    case(r"f(n)=2n+1007", r"All solutions are $\boxed{f(m)=2m+1007}$.", True, "variable renamed"),
    case(r"f(x)=x", r"The only solution is $\boxed{g(x)=x}$.", False, "different function name"),
    case(r"x = 2", r"Solving, we find $\boxed{y = 2}$.", False, "different variable"),
    case(r"x=2", r"Solving, we find $\boxed{2}$.", True, "bare value for named gold"),
    case(r"m_{\max} = 5", r"The maximum is $\boxed{5}$.", True, "bare value for subscripted name"),
    case(r"5", r"Hence $\boxed{m_{\max} = 5}$.", True, "subscripted name for bare gold"),
    case(r"f(x)=x", r"The only solution is $\boxed{f(x)=-x}$.", False, "different function"),
    case(r"f(x) = 2x+3", r"So $\boxed{f(x)=3+2x}$.", True, "same function, terms reordered"),
    case(r"y = 2x + 3", r"The line is $\boxed{y=2x+3}$.", True, "same line"),
    case(r"y = 2x + 3", r"The line is $\boxed{y=3x+2}$.", False, "different line"),
    case(r"a = 3", r"Therefore $\boxed{b = 3}$.", False, "different variable"),
    case(r"k=-4", r"The final answer is $k = -4$.", True, "named value in a phrase"),
    case(r"(a,b)=(1,-1)", r"So $\boxed{(a,b)=(-1,1)}$.", False, "swapped named tuple"),
    case(r"(a,b)=(1,-1)", r"So $\boxed{a=1, b=-1}$.", True, "same pair as two equations"),
    case(r"f(x)=x", r"So $\boxed{f(y)=y}$.", True, "variable renamed"),
    case(r"h(t)=-16t^2+64t", r"The height is $\boxed{h(s)=-16s^2+64s}$.", True, "variable renamed"),
    case(r"g(x)=x^2-2x+2", r"So $\boxed{f(x)=x^2-2x+2}$.", False, "different function name"),
    case(r"P(x)=x^3-x", r"Hence $\boxed{P(x)=x(x-1)(x+1)}$.", True, "factored form"),
    case(r"f(n)=2n+1007", r"All solutions are $\boxed{f(n)=2n+1008}$.", False, "different constant"),
    case(r"x = 2", r"Solving, we find $\boxed{x = -2}$.", False, "wrong sign"),
]

# Answers stated in prose (no box, no tag) are found by phrase or as a standalone last number.
PROSE_ANSWER = [
    case(r"34", r"Checking $n = 35$ fails, so $n = 34$ works." "\n\n" r"Final Answer: The largest $n$ is 34.", True,
         "Final Answer sentence"),
    case(r"34", r"Checking $n = 34$ fails, so $n = 33$ works." "\n\n" r"Final Answer: The largest $n$ is 33.", False,
         "Final Answer sentence, wrong"),
    case(r"12", r"Both conditions hold only for twelve objects. Therefore, 12 is the answer.", True, "'is the answer'"),
    case(r"12", r"Substituting back confirms it. So $x = 12$ is the solution.", True, "'is the solution'"),
    case(r"12", r"Substituting back confirms it. So $x = 13$ is the solution.", False, "'is the solution', wrong"),
    case(r"7", r"Adding the three terms gives 7. The final answer is 7.", True, "'final answer is'"),
    case(r"7", r"Final Answer: The final answer is $7$. I hope it is correct.", True, "Minerva style"),
    case(r"7", r"Adding the three terms gives 8. The answer is 8.", False, "'the answer is', wrong"),
    case(r"42", r"We multiply 6 by 7." "\n" r"Answer: 42", True, "'Answer:'"),
    case(r"42", r"We multiply 6 by -7." "\n" r"Answer: $-42$", False, "'Answer:', wrong sign"),
    case(r"18", r"She pays 3 * 6 = 18 dollars in total.", True, "last number", options=LAST_ON),
    case(r"18", r"She had 3 * 6 = 18, then gave away 3, so she has 18 - 3 = 15 left.", False, "last number is 15"),
    case(r"\frac{3}{4}", r"The probability is therefore $\frac{3}{4}$, so the answer is 3/4.", True, "slash fraction"),
    case(r"5", r"The distance is the hypotenuse of a 1-2 right triangle. Thus the answer is $\sqrt{5}$.", False,
         "sqrt(5) is not 5"),
    case(r"100", r"Summing the series gives one hundred. The final answer is: 100", True, "colon after phrase"),
    case(r"100", r"Summing up all the terms:" "\n\n" r"**Final Answer:** 100", True, "markdown bold"),
    case(r"100", r"Summing up all the terms:" "\n\n" r"**Answer:** 99", False, "markdown bold, wrong"),
    case(r"6", r"We can arrange the three letters in 3 * 2 * 1 ways. Therefore, the number of ways is 6.", True,
         "last number", options=LAST_ON),
    case(r"2\sqrt{3}", r"The altitude of the triangle is computed above. The final answer is $2\sqrt{3}$.", True,
         "phrase with LaTeX"),
    case(r"2\sqrt{3}", r"The altitude of the triangle is computed above. The final answer is $\sqrt{12}$.", False,
         "equivalent surd, not final (issue 36): a square factor under the root"),
    case(r"9", r"It could go either way. The answer is 9 or 10.", False, "hedge in prose"),
    case(r"25", r"I believe the answer is 25, since the area of the square is 5 * 5.", True,
         "phrase before further numbers"),
    case(r"3", r"We tested the small cases carefully. The answer is not 3.", False, "negated statement"),
    case(r"8", r"Testing each residue class, in conclusion there are 8 solutions.", True, "last number", options=LAST_ON),
    case(r"#### 72", r"Natalia sold 48 clips in April and half as many in May, 48 / 2 = 24." "\n"
         r"In total she sold 48 + 24 = 72 clips.", True, "last number against a GSM8K gold",
         options=LAST_ON),
    case(r"#### 72", r"Natalia sold 48 clips in April and twice as many in May, 48 * 2 = 96." "\n"
         r"In total she sold 48 + 96 = 144 clips.", False, "last number, wrong"),
]

# Notations of the same thing are equal.
SET_NOTATION = [
    case(r"(-1,1)", r"The solution set is $\boxed{\{x \mid -1<x<1\}}$.", True, "set-builder for an interval"),
    case(r"\{x \mid -1<x<1\}", r"The solution set is $\boxed{(-1,1)}$.", True, "interval for set-builder gold"),
    case(r"(-1,1)", r"The solution set is $\boxed{\{x \mid -1 \le x<1\}}$.", False, "set-builder, wrong endpoint"),
    case(r"(-\infty, 2] \cup [3, \infty)", r"The domain is $\boxed{(-∞, 2] ∪ [3, ∞)}$.", True,
         "Unicode infinity and union"),
    case(r"x \le 5", r"So $\boxed{x ≤ 5}$.", True, "Unicode <="),
    case(r"2\sqrt{2}", r"The diagonal is $\boxed{2√2}$.", True, "Unicode root"),
    case(r"2\pi", r"The period is $\boxed{2π}$.", True, "Unicode pi"),
    case(r"(-7,16,5)", r"The cross product is $\boxed{\begin{pmatrix}-7\\16\\5\end{pmatrix}}$.", True,
         "column vector for a tuple"),
    case(r"\begin{pmatrix}-7\\16\\5\end{pmatrix}", r"The cross product is $\boxed{(-7,16,5)}$.", True,
         "tuple for a column vector"),
    case(r"\begin{pmatrix}-7\\16\\5\end{pmatrix}", r"The cross product is $\boxed{(-7,16,-5)}$.", False,
         "wrong component"),
    case(r"\{-2,-1,0,1,2\}", r"The integer solutions are $\boxed{0, \pm 1, \pm 2}$.", True, "plus-minus list"),
    case(r"\{-2,-1,0,1,2\}", r"The integer solutions are $\boxed{\pm 1, \pm 2}$.", False, "missing 0"),
    case(r"0", r"Checking each case, the equation holds for $\boxed{\text{only } x=0}$.", True, "'only x=0'"),
    case(r"\frac{1}{2}", r"The probability is $\boxed{\dfrac{1}{2}}$.", True, "dfrac"),
    case(r"\frac{1}{2}", r"The probability is $\boxed{\tfrac{1}{2}}$.", True, "tfrac"),
    case(r"10455", r"The total is $\boxed{10,455}$.", True, "comma separator"),
    case(r"10455", r"The total is $\boxed{10{,}455}$.", True, "braced comma separator"),
    case(r"10455", r"The total is $\boxed{10\,455}$.", True, "thin-space separator"),
    case(r"10455", r"The total is $\boxed{10,456}$.", False, "separator, wrong value"),
    case(r"\emptyset", r"No real number works, so the solution set is $\boxed{\{\}}$.", True, "empty set notations"),
    case(r"\mathbb{R}", r"The domain is $\boxed{(-\infty, \infty)}$.", True, "reals as an interval"),
    case(r"[0, 1]", r"The range is $\boxed{\{y \mid 0 \le y \le 1\}}$.", True, "set-builder with another letter"),
    case(r"[0,1]", r"The range is $\boxed{\{0, 1\}}$.", False, "two points are not the interval"),
    case(r"\{0, 1\}", r"The possible values are $\boxed{[0,1]}$.", False, "interval is not two points"),
    case(r"(-\infty, 0) \cup (0, \infty)", r"The domain is $\boxed{\mathbb{R} \setminus \{0\}}$.", True,
         "set difference"),
    case(r"\pm 3", r"The solutions are $\boxed{3, -3}$.", True, "plus-minus gold"),
    case(r"x \geq 1", r"So the answer is $\boxed{x ≥ 1}$.", True, "Unicode >="),
]

# Golds in unusual but valid notations; the completion uses ordinary LaTeX.
GOLD_NOTATION = [
    case(r"$\frac{\sqrt{3}}{2}$", r"So $\sin 60^\circ = \boxed{\frac{\sqrt{3}}{2}}$.", True, "gold wrapped in $"),
    case(r"\dfrac{3}{4}", r"The fraction is $\boxed{\frac{3}{4}}$.", True, "dfrac gold"),
    case(r"\frac34", r"The fraction is $\boxed{\frac{3}{4}}$.", True, "unbraced frac gold"),
    case(r"3\frac{1}{2}", r"The total length is $\boxed{\frac{7}{2}}$.", True, "mixed number gold"),
    case(r"3\frac{1}{2}", r"The total length is $\boxed{\frac{3}{2}}$.", False, "mixed number is not a product"),
    case(r"\text{(C)}", r"Comparing the options, the answer is $\boxed{\text{(C)}}$.", True, "choice letter"),
    case(r"\text{(C)}", r"Comparing the options, the answer is $\boxed{C}$.", True, "bare choice letter"),
    case(r"\text{(C)}", r"Comparing the options, the answer is $\boxed{\text{(D)}}$.", False, "wrong choice"),
    case(r"0.\overline{3}", r"The decimal equals $\boxed{\frac{1}{3}}$.", True, "repeating-decimal gold"),
    case(r"0.\overline{3}", r"The decimal equals $\boxed{0.3}$.", False, "0.3 is not 1/3"),
    case(r"1.\overline{27}", r"Writing it as a fraction, $\boxed{\frac{14}{11}}$.", True, "two-digit repetend"),
    case(r"\$1.50", r"Each apple costs $\boxed{1.50}$ dollars.", True, "dollar gold"),
    case(r"\$1.50", r"Each apple costs $\boxed{1.05}$ dollars.", False, "different amount"),
    case(r"\sqrt2", r"The ratio is $\boxed{\sqrt{2}}$.", True, "unbraced sqrt gold"),
    case(r"2^{10}", r"There are $\boxed{1024}$ subsets.", True, "power gold"),
    case(r"2^{10}", r"There are $\boxed{20}$ subsets.", False, "2^10 is not 2*10"),
    case(r"\left[ -2, 3 \right)", r"The solution set is $\boxed{[-2,3)}$.", True, "\\left[ \\right) gold"),
    case(r"x \in [2, 5)", r"The solution set is $\boxed{[2,5)}$.", True, "membership gold"),
    case(r"\text{Monday}", r"Counting forward 7 days, it is $\boxed{\text{Monday}}$.", True, "word gold"),
    case(r"\text{Monday}", r"Counting forward 8 days, it is $\boxed{\text{Tuesday}}$.", False, "different word"),
    case(r"#### 1,250", r"He saves 125 * 10 = 1250 dollars." "\n" r"#### 1250", True, "GSM8K gold with separator"),
    case(r"#### 18", r"<think>3 times 6</think>" "\n" r"<answer>18</answer>", True, "GSM8K gold, tag answer"),
    case(r"1{,}000", r"The number of terms is $\boxed{1000}$.", True, "braced separator gold"),
    case(r"10^\circ", r"The angle is $\boxed{10}$ degrees.", True, "degree gold"),
    case(r"\frac{1}{\sqrt{2}}", r"So $\cos 45^\circ = \boxed{\frac{\sqrt{2}}{2}}$.", True, "unrationalised gold"),
    case(r"\tfrac{\pi}{6}", r"The angle is $\boxed{\frac{\pi}{6}}$.", True, "tfrac gold"),
    case(r"6\sqrt{3}\text{ cm}^2", r"The area is $\boxed{6\sqrt{3}}$.", True, "gold with a unit"),
    case(r"y = -\frac{1}{2}x + 3", r"The tangent line is $\boxed{y = -\frac{x}{2} + 3}$.", True, "line gold"),
    case(r"$(2,3)$", r"The intersection point is $\boxed{(2,3)}$.", True, "tuple gold in $"),
    case(r"$(2,3)$", r"The intersection point is $\boxed{(3,2)}$.", False, "swapped pair"),
    case(r"\boxed{5}", r"Adding gives 2 + 3 = 5. The answer is 5.", True, "boxed gold"),
    case(r"\text{5}", r"So the answer is $\boxed{5}$.", True, "text-wrapped gold"),
    case(r"1\frac{1}{4}", r"The recipe needs $\boxed{1.25}$ cups.", True, "mixed number vs decimal"),
    case(r"2.5 \times 10^{-3}", r"The concentration is $\boxed{0.0025}$.", True, "scientific notation gold"),
    case(r"\sqrt[3]{2}", r"The edge length is $\boxed{2^{1/3}}$.", True, "cube-root gold"),
    case(r"\binom{5}{2}", r"The number of pairs is $\boxed{10}$.", True, "binomial gold"),
]

# Text inside <think>...</think> (or before </think> when the template opened it) is reasoning.
THINK = [
    case(r"4", r"<think>Maybe 3? No: the fourth point also lies on the circle, so 4.</think>" "\n" r"$\boxed{4}$",
         True, "doubt resolved inside think"),
    case(r"4", r"<think>I'll go with \boxed{3}... wait, recount: there are 4.</think>" "\n"
         r"The answer is $\boxed{4}$.", True, "boxed 3 inside think is not a hedge"),
    case(r"4", r"<think>The answer is \boxed{4}.</think>" "\n" r"The answer is $\boxed{3}$.", False,
         "right only inside think"),
    case(r"4", r"<think>So it's 2+2 = \boxed{4}", False, "unclosed think, no final answer"),
    case(r"4", r"We need $x$. Perhaps \boxed{3}? No, that misses a case." "\n" r"</think>" "\n\n"
         r"So $\boxed{4}$.", True, "template opened think; earlier box is reasoning", options=OPENED),
    case(r"4", r"Let me compute: \boxed{4}." "\n" r"</think>" "\n\n" r"The answer is 5.", False,
         "template opened think; final answer wrong", options=OPENED),
    case(r"4", r"Adding the two cases gives 4. Answer: 4 seems plausible." "\n" r"</think>", False,
         "everything before </think> is reasoning", options=OPENED),
    case(r"4", r"<think>Two plus two is 4, so the answer is 4.</think>", False, "nothing after think"),
    case(r"#### 18", r"<think>3*6=18</think>" "\n" r"<answer>18</answer>", True, "think then answer tag"),
    case(r"#### 18", r"<think>3*6=18</think>" "\n" r"<answer>9</answer>", False, "think then wrong tag"),
    case(r"#### 18", r"<think>Is it 16? Let me redo it: 3 * 6 = 18.</think>" "\n" r"#### 18", True,
         "think then GSM8K marker"),
    case(r"#### 18", r"<think>Three packs of six, 3 * 6 = 18.</think>" "\n" r"So the total is 18.", True,
         "last number after think", options=LAST_ON),
    case(r"#### 18", r"<think>The answer is 18.</think>" "\n" r"I'm not sure.", False, "no answer after think"),
    case(r"12", r"<think>First I got \boxed{10}, but the corners are counted twice... no, 12.</think>" "\n"
         r"<answer>12</answer>", True, "discarded box inside think"),
    case(r"7", r"<think>Let me think... 3 + 4 = 7.</think>" "\n" r"The final answer is $\boxed{7}$ or $\boxed{8}$.",
         False, "hedge after think"),
    case(r"7", r"<think>3 + 4 = 7. The final answer is 7.", False, "unclosed think, answer inside"),
    case(r"7", r"First, 3 + 4 = 7. So the answer is 7." "\n" r"</think>" "\n\n" r"The answer is $\boxed{7}$.", True,
         "template opened think, consistent", options=OPENED),
    case(r"7", r"First, the answer is 8. Hmm, no, I dropped a term." "\n" r"</think>" "\n" r"The final answer is 7.",
         True, "change of mind before </think> is not a hedge", options=OPENED),
    # Unless the spec says the template opened a block, a stray </think> hides nothing (issue 36).
    case(r"7", r"First, the answer is 8. Hmm, no, I dropped a term." "\n" r"</think>" "\n" r"The final answer is 7.",
         False, "stray </think> without prompt_opens_think: both statements are read, a hedge"),
    case(r"7", r"The answer is \boxed{8}. </think> The answer is \boxed{7}.", False,
         "stray </think> hides nothing: a hedge"),
    case(r"7", r"The answer is \boxed{8}. </think> The answer is \boxed{7}.", True,
         "the same with the template's open block: the first box is reasoning", options=OPENED),
    case(r"7", r"The answer is \boxed{7}.", False, "opened by the template and never closed: all reasoning",
         options=OPENED),
    case(r"7", r"<think>" "\n" r"7" "\n" r"</think>" "\n\n", False, "only whitespace after think"),
    case(r"7", r"<think>the answer is 7</think>The answer is 6.", False, "wrong answer after think"),
    case(r"3", r"<think>We get \boxed{3}.</think>" "\n\n" r"Thus $x = \boxed{3}$.", True, "same box inside and after"),
    case(r"\frac{1}{2}", r"<think>One of two equally likely outcomes: 1/2.</think>" "\n\n"
         r"The probability is $\boxed{\frac12}$.", True, "fraction after think"),
    case(r"5", r"<think>x^2 = 25 and x > 0.</think>" "\n" r"<think>The answer is 5.</think>", False,
         "two think blocks, no answer outside"),
    case(r"5", r"Okay, so $x^2 = 25$, and since $x$ is a length, $x = 5$." "\n" r"</think>" "\n\n"
         r"**Final Answer**" "\n" r"\[" "\n" r"\boxed{5}" "\n" r"\]", True, "DeepSeek-R1 style"),
    case(r"5", r"<think>Is it \boxed{5}?</think>" "\n" r"The answer is $\boxed{6}$.", False,
         "right only inside think, wrong outside"),
]

# Rows with the expected extraction method; some with last-number extraction switched off.
EXTRACTION_METHOD = [
    case(r"#### 18", r"3 packs of 6 is 18 pencils." "\n" r"<answer>18</answer>", True, "answer tag",
         method="answer_tag"),
    case(r"#### 18", r"3 packs of 6 is 3 \times 6 = 18, so the total is $\boxed{18}$.", True, "boxed", method="boxed"),
    case(r"#### 18", r"3 packs of 6 pencils is 3 * 6 pencils, so the answer is 18.", True, "phrase", method="phrase"),
    case(r"#### 18", r"3 packs of 6 is 3 * 6 = 18 pencils." "\n" r"#### 18", True, "GSM8K marker", method="gsm8k"),
    case(r"#### 18", r"Three packs of six pencils: 3 * 6 = 18.", True, "last number", method="last_number",
         options=LAST_ON),
    case(r"#### 18", r"3 packs of 6 is $\fbox{18}$.", True, "fbox counts as boxed", method="boxed"),
    case(r"#### 18", r"<answer>18</answer>" "\n" r"(That is, $\boxed{18}$.)", True, "tag beats box",
         method="answer_tag"),
    case(r"#### 18", r"Multiplying, 3 * 6 = 18." "\n\n" r"Final Answer: 18", True, "Final Answer:", method="phrase"),
    case(r"#### 18", r"The answer is 18. In LaTeX: $\boxed{18}$.", True, "box beats phrase", method="boxed"),
    case(r"7", r"Adding the terms, the answer is $\boxed{7}$.", True, "phrase with a box inside", method="boxed"),
    case(r"#### 18", r"Three packs of six pencils: 3 * 6 = 18.", False, "last number disabled", options=NO_LAST),
    case(r"42", r"After simplifying the product, we get 42", False, "last number disabled", options=NO_LAST),
    case(r"42", r"After simplifying the product, the answer is 42.", True, "phrase still counts", method="phrase",
         options=NO_LAST),
    case(r"42", r"After simplifying the product, we get $\boxed{42}$.", True, "box still counts", method="boxed",
         options=NO_LAST),
    case(r"#### 42", r"6 * 7 = 42" "\n" r"#### 42", True, "GSM8K still counts", method="gsm8k", options=NO_LAST),
    case(r"42", r"After simplifying the product, we get 42", True, "last number", method="last_number",
         options=LAST_ON),
    case(r"5", r"The distance between the points is $\sqrt{5}$.", False, "5 inside sqrt is not standalone"),
    case(r"5", r"Solving gives $5x = 25$.", False, "last standalone number is 25"),
    case(r"3", r"The value must satisfy $x < 3$.", False, "bound is not standalone"),
    case(r"20", r"We get 4 * 5 = 20." "\n" r"Answer: 20", True, "Answer: line", method="phrase"),
    case(r"20", r"Answer: 20" "\n\n" r"This used 3 steps and 2 identities.", False,
         "a remark after the answer is outside the tail grammar: no final answer", method="phrase",
         status_not="ok"),
    case(r"20", r"<answer>20</answer>", True, "tag with last number disabled", method="answer_tag", options=NO_LAST),
    case(r"9", r"Counting the cases one by one, in total, 9.", True, "last number", method="last_number",
         options=LAST_ON),
    case(r"9", r"Counting the cases one by one, in total, 9.", False, "last number disabled", options=NO_LAST),
    case(r"0.5", r"Each outcome is equally likely, so the probability is 0.5.", True, "decimal last number",
         method="last_number", options=LAST_ON),
    case(r"#### 18", r"<answer>9</answer>", False, "wrong tag", method="answer_tag"),
    case(r"#### 18", r"3 + 6 = 9" "\n" r"#### 9", False, "wrong GSM8K marker", method="gsm8k"),
    case(r"2", r"The function $f(x) = x^2$ has its vertex at the origin.", False, "no standalone number"),
]


def crash(gold: str, boxed: str, note: str) -> dict[str, Any]:
    """A crash input inside an ordinary boxed answer."""
    return case(gold, "Simplifying, the answer is $\\boxed{" + boxed + "}$.", False, note, status_not="error")


def crash_raw(gold: str, completion: str, note: str) -> dict[str, Any]:
    return case(gold, completion, False, note, status_not="error")


# Inputs that can make a parser or sympy raise. None of them states the gold; each must score 0
# with status no_answer, timeout or ok (wrong), never error. Every input is under 200 KB.
GRADER_CRASH = [
    crash(r"4", "{" * 300 + "7" + "}" * 300, "300 nested braces"),
    crash(r"4", "(" * 3000 + "7" + ")" * 3000, "3000 nested parentheses"),
    crash(r"4", r"9^{9^{9^{9}}}", "power tower too large to evaluate"),
    crash(r"4", r"10^{10^{10}}", "power too large to evaluate"),
    crash(r"4", r"\frac{1}{}", "malformed frac, empty denominator"),
    crash(r"4", r"\frac{\frac{\frac{}{}}{}}{}", "nested empty fracs"),
    crash(r"4", r"\frac", "frac with no arguments"),
    crash(r"4", r"1000000!", "huge factorial"),
    crash(r"4", r"100000!!", "huge double factorial"),
    crash(r"4", "\u200b5\u202e", "zero-width space and RTL override"),
    crash(r"4", "\x01\x02\x1b[31m7", "control characters and ANSI escape"),
    crash(r"4", "7\x00", "NUL byte"),
    crash(r"4", "1" * 100_000, "100,000-digit box"),
    crash(r"4", "1+" * 50_000 + "1", "100,000-character sum"),
    crash(r"4", r"\sqrt{" * 200 + "7" + "}" * 200, "200 nested square roots"),
    crash(r"4", "-" * 5001 + "7", "5001 minus signs"),
    crash(r"4", r"\text{" * 300 + "7" + "}" * 300, "300 nested \\text"),
    crash(r"4", r"\mathrm{" * 500 + "x" + "}" * 500, "500 nested \\mathrm"),
    crash(r"4", r"\frac{" * 300 + "1}{2}" * 300, "300 nested fracs"),
    crash(r"4", "2^{" * 300 + "2" + "}" * 300, "power tower 300 high"),
    crash(r"4", "(" + ",".join(["1"] * 20_000) + ")", "20,000-entry tuple"),
    crash(r"4", r"\begin{pmatrix}" + r"\\".join(["&".join(["1"] * 60)] * 60) + r"\end{pmatrix}", "60x60 matrix"),
    crash(r"4", r"\{" + ",".join(str(i) for i in range(5000)) + r"\}", "5000-element set"),
    crash(r"4", r"\left(" * 200 + "7" + r"\right)" * 200, "200 nested \\left( \\right)"),
    crash(r"4", r"\binom{100000}{50000}", "huge binomial"),
    crash(r"4", r"1e999999", "float overflow"),
    crash(r"4", r"\begin{pmatrix}1&2\\3\end{pmatrix}", "ragged matrix"),
    crash(r"4", r"\begin{pmatrix}1\\2\end{bmatrix}", "mismatched environments"),
    crash(r"4", r"\log_1 7", "logarithm base 1"),
    crash(r"4", r"\sqrt[0]{7}", "zeroth root"),
    crash(r"4", r"(x+1)^{100000}", "huge polynomial power"),
    crash(r"4", r"10^{-10^{6}}", "underflowing power"),
    crash(r"4", "\ud800", "lone surrogate"),
    crash(r"4", r"\fbox{" * 3000 + "7" + "}" * 3000, "3000 nested fbox"),
    crash(r"4", "[" * 2000 + "7" + "]" * 2000, "2000 nested brackets"),
    crash(r"4", "x " + "< x " * 3000, "3000-long inequality chain"),
    crash(r"4", "x " + "= x " * 3000, "3000-long equation chain"),
    crash(r"4", r"\frac{" + "x+" * 2000 + "1}{" + "x-" * 2000 + "1}", "long rational function"),
    crash_raw(r"4", r"\boxed{7" * 10_000, "10,000 unclosed boxes"),
    crash_raw(r"4", "<think>" * 5000 + "4", "5000 unclosed think tags"),
    crash_raw(r"4", "$" * 20_000 + "7", "20,000 dollar signs"),
    crash_raw(r"4", "\\" * 20_000 + "7", "20,000 backslashes"),
    crash_raw(r"4", "#### " + "9" * 100_000, "100,000-digit GSM8K answer"),
    crash_raw(r"4", "The final answer is " + "7." * 50_000, "100,000-character dotted phrase"),
]

CLASSES: dict[str, list[dict[str, Any]]] = {
    "hedging": HEDGING,
    "order": ORDER,
    "undefined": UNDEFINED,
    "relation_bound": RELATION_BOUND,
    "unit_words": UNIT_WORDS,
    "integer_tolerance": INTEGER_TOLERANCE,
    "multipart_gold": MULTIPART_GOLD,
    "equation_hedge": EQUATION_HEDGE,
    "grader_crash": GRADER_CRASH,
    "named_equation": NAMED_EQUATION,
    "prose_answer": PROSE_ANSWER,
    "set_notation": SET_NOTATION,
    "gold_notation": GOLD_NOTATION,
    "think": THINK,
    "extraction_method": EXTRACTION_METHOD,
}


def rows() -> list[dict[str, Any]]:
    out = []
    for name, cases in CLASSES.items():
        for n, row in enumerate(cases):
            out.append({"id": f"{name}-{n}", "class": name, **row})
    return out


def main() -> None:
    # ensure_ascii keeps the file plain ASCII (and lets the lone-surrogate case round-trip).
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows():
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
