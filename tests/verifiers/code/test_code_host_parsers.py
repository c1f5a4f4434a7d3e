"""Issue 24, item 3: every parse of candidate output on the host is linear. Each host-side parser gets
adversarial output of the largest size a job may return (1 MiB per stream) and must finish within a
budget a linear pass meets many times over, where a backtracking pattern would hold the verifier
process (and the GIL) for minutes to days.

The budget is generous on purpose (machines are noisy): it separates linear from quadratic, not
fast from slow.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest

from rewardsmith.sandbox.job import ExecResult
from rewardsmith.verifiers.code import is_compile_error, parse_records, run_status
from rewardsmith.verifiers.code.tests import check_output, extract_code

CAP = 1 << 20  # what a job may return per stream (code.output_bytes, sandbox Limits.output_bytes)
BUDGET_S = 5.0


def fill(unit: str) -> str:
    return (unit * (CAP // len(unit) + 1))[:CAP]


TRACEBACKS = fill('Traceback (most recent call last):\n  File "/w/solution.py", line 3\nx\n')
ADVERSARIAL = {
    "repeated bare frames": TRACEBACKS,
    "frames then a syntax error": TRACEBACKS[: CAP - 40] + "\nSyntaxError: invalid syntax\n",
    "syntax errors then function frames": fill('SyntaxError: x\n  File "/w/solution.py", line 1, in f\n'),
    "one long line": "x" * CAP,
    "quotes without ends": fill('File "'),
    "fences": fill("```x\n"),
    "forged records": fill("RESULT 0000 {\"i\": 1}\n"),
    "numbers": fill("1" * 999 + " "),
}


def within_budget(parse: Callable[[], object]) -> float:
    start = time.perf_counter()
    parse()
    return time.perf_counter() - start


PARSERS: dict[str, Callable[[str], object]] = {
    "compile error": is_compile_error,
    "run status (stderr)": lambda text: run_status(ExecResult(status="ok", exit_code=1, stderr=text)),
    "result records": lambda text: parse_records(text, "f" * 32),
    "code extraction": extract_code,
    "checker exact": lambda text: check_output("exact", text, text[::-1]),
    "checker whitespace": lambda text: check_output("whitespace", text, text + " "),
    "checker tokens": lambda text: check_output("tokens_ci", text, text.upper()),
    "checker float": lambda text: check_output("float", text, text),
}


@pytest.mark.slow
@pytest.mark.parametrize("parser", list(PARSERS))
@pytest.mark.parametrize("shape", list(ADVERSARIAL))
def test_host_parsers_are_linear_on_the_largest_output(parser: str, shape: str) -> None:
    elapsed = within_budget(lambda: PARSERS[parser](ADVERSARIAL[shape]))
    assert elapsed < BUDGET_S, f"{parser} on {shape}: {elapsed:.1f}s"


@pytest.mark.parametrize(("stderr", "compiled"), [
    ('  File "/w/solution.py", line 1\n    print(input()\n         ^\nSyntaxError: \'(\' was never closed\n', True),
    ('  File "/w/solution.py", line 2\n    return\nIndentationError: unexpected indent\n', True),
    # eval of bad text at run time: a SyntaxError with a function frame of the solution after the bare one
    ('Traceback (most recent call last):\n  File "/w/solution.py", line 5, in <module>\n    eval("1 +")\n'
     '  File "<string>", line 1\n    1 +\n      ^\nSyntaxError: invalid syntax\n', False),
    ('Traceback (most recent call last):\n  File "/w/solution.py", line 5, in <module>\n    x()\n'
     'NameError: x\n', False),
    ("SyntaxError: no frame of the solution before it\n", False),
    ("", False),
])
def test_compile_errors_are_still_told_from_runtime_errors(stderr: str, compiled: bool) -> None:
    assert is_compile_error(stderr) is compiled
    status, _ = run_status(ExecResult(status="ok", exit_code=1, stderr=stderr))
    assert status == ("compile_error" if compiled else "runtime_error")


def test_the_old_backtracking_pattern_was_the_fault() -> None:
    """The regular expression this replaced, on 30 KB of the repeated-traceback shape, took ~25 s;
    the linear reader agrees with it on every shape above at a size it can still finish."""
    old = re.compile(r'File "[^"]*solution\.py", line \d+\n(?:.*\n)*?(SyntaxError|IndentationError|TabError):'
                     r'(?![\s\S]*File "[^"]*solution\.py", line \d+, in )')
    for text in ADVERSARIAL.values():
        small = text[:2000]
        assert bool(old.search(small)) == is_compile_error(small)
