"""The host's work on a candidate's output is bounded per row (issue 35, section 5).

After the sandbox, the host parses the judge's records, decodes returned values, compares them
with the expected ones and checks stdout. Some of that costs far more than the size of its
input says: a set of ints that all hash alike is quadratic to build (16,000 of them, 400 KB of
JSON, take seconds; the judge pays it once within its own time limit, and the host paid it
again, unbounded, on the one thread that verifies the whole batch), and a Fraction of two
megabit ints costs a gcd of seconds. So that work runs in a killable worker, bounded by
``host_timeout_s`` and ``host_memory_mb``; a row that hits a bound scores 0 with feedback, and
the rows beside it are scored as usual.

Both polarities, on every backend: attacks through a real candidate and judge score 0 and name
the host's limit; honest solutions returning or printing large but reasonable output score 1
under the default bounds. The bounds themselves are also exercised directly on what a judge
could write (a record of a size no honest answer needs), where no sandbox is involved.
"""

from __future__ import annotations

import json
import random

import pytest

import rewardsmith.verifiers.code  # noqa: F401 - registers "code"
from rewardsmith.sandbox.job import ExecResult
from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.code import host, judged_tests, stdio_tests
from rewardsmith.verifiers.code.host import HostWork
from rewardsmith.verifiers.code.tests import TestSuite as Suite

P61 = (1 << 61) - 1  # every multiple of it hashes to 0 in CPython


def colliding_set(n: int) -> dict:
    """A wire ``$set`` of ``n`` distinct ints that all hash alike: building it is quadratic."""
    return {"$set": [{"$int": hex(k * P61)} for k in range(1, n + 1)]}


def megabit_fraction(seed: int) -> dict:
    """A wire ``$fraction`` of two random megabit ints: building it costs their gcd (seconds)."""
    rng = random.Random(seed)
    numerator, denominator = (rng.getrandbits(1 << 20) | 1 for _ in range(2))
    return {"$fraction": [{"$int": hex(numerator)}, {"$int": hex(denominator)}]}


def judge_output(nonce: str, values: list) -> str:
    """What the harness's judge writes for a run of call cases that each returned ``values[i]``."""
    lines = [{"plan": [f"f({i})" for i in range(len(values))]}]
    lines += [
        {"i": i, "status": "returned", "value": value, "stdout": "", "stderr": ""} for i, value in enumerate(values)
    ]
    lines.append({"done": True})
    return "".join(f"\nRESULT {nonce} {json.dumps(line)}\n" for line in lines)


def call_suite(expected: list) -> Suite:
    return Suite(
        "call", cases=[{"args": [i], "kwargs": {}, "expected": e} for i, e in enumerate(expected)], entry_point="f"
    )


NONCE = "0" * 32


def bounded(values: list, expected: list, timeout_s: float = 2.0, memory_mb: int = 1024):
    result = ExecResult("ok", exit_code=0, stdout=judge_output(NONCE, values))
    work = HostWork(judged_tests, (NONCE, result, call_suite(expected)))
    (outcome,) = host.run([work], timeout_s, memory_mb)
    return outcome, host.failure(outcome, timeout_s, memory_mb)


# -- the bounds, on what a judge could write -------------------------------------------------------


def test_a_hash_colliding_set_hits_the_time_bound_and_scores_0():
    outcome, verdict = bounded([colliding_set(60_000)], [[1, 2]], timeout_s=1.0)
    assert outcome.kind == "timeout", outcome
    assert (verdict.score, verdict.status, verdict.details["host_limit"]) == (0.0, "ok", "timeout")
    assert "host_timeout_s" in verdict.feedback


def test_megabit_fractions_hit_the_time_bound_and_score_0():
    outcome, verdict = bounded([[megabit_fraction(seed) for seed in range(6)]], [[0.5]], timeout_s=1.0)
    assert outcome.kind == "timeout" and verdict.score == 0.0 and verdict.status == "ok", outcome


def test_a_record_too_big_for_the_memory_bound_scores_0():
    floats = [k + 0.5 for k in range(5_000_000)]  # about 60 MB of JSON: no answer the tests need
    outcome, verdict = bounded([floats], [[0.5]], timeout_s=60.0, memory_mb=256)
    assert outcome.kind == "error" and outcome.value.startswith("MemoryError"), outcome
    assert (verdict.score, verdict.status, verdict.details["host_limit"]) == (0.0, "ok", "memory")
    assert "host_memory_mb" in verdict.feedback


def test_a_fault_of_ours_is_an_error_not_a_0():
    (outcome,) = host.run([HostWork(judged_tests, (NONCE, "not a result", call_suite([1])))], 5.0, 1024)
    verdict = host.failure(outcome, 5.0, 1024)
    assert outcome.kind == "error" and verdict.status == "error", (outcome, verdict)


def test_honest_large_values_finish_within_the_default_bounds():
    n = 50_000
    values = [
        list(range(n)),
        {"$set": list(range(n))},
        {"$dict": [[str(k), k] for k in range(n)]},
        {"$fraction": [1, 3]},
        {"$int": hex(3**100_000)},
    ]
    expected = [
        list(range(n)),
        {"$set": list(range(n))},
        {str(k): k for k in range(n)},
        {"$fraction": [1, 3]},
        {"$int": hex(3**100_000)},
    ]
    verifier = build("code")
    outcome, verdict = bounded(values, expected, verifier.host_timeout_s, verifier.host_memory_mb)
    assert verdict is None, outcome
    assert [t["status"] for t in outcome.value] == ["passed"] * len(values), outcome.value


def test_stdio_checks_run_bounded_too():
    cases = [{"input": "", "output": "1 2 3"}, {"input": "", "output": "0.5"}]
    results = [ExecResult("ok", exit_code=0, stdout="1 2 3\n"), ExecResult("ok", exit_code=0, stdout="0.4\n")]
    (outcome,) = host.run([HostWork(stdio_tests, (cases, results, "float", True, 5.0))], 5.0, 1024)
    tests, to_check = outcome.value
    assert [t["status"] for t in tests] == ["passed", "wrong_answer"] and to_check == []


# -- end to end, through a real candidate and judge, on every backend ----------------------------

# The solution returns a set of 16,000 ints that all hash alike (it pays the quadratic cost of
# building it once, within its own time limit; the judge pays it again rebuilding it, within its
# generous limit; the host would have paid it a third time, unbounded).
COLLIDING_SOLUTION = f"def f(x):\n    return {{k * {P61} for k in range(1, 16_001)}}\n"
HONEST_CALL = "def f(x):\n    return [x] * 2\n"
BIG_CALL = "def f(n):\n    return {'squares': [k * k for k in range(n)], 'set': set(range(n))}\n"
BIG_STDIO = "n = int(input())\nprint(' '.join(str(k / 7) for k in range(n)))\n"


@pytest.fixture
def backend(code_backend):
    return code_backend


def verifier(backend, **options):
    made = build({"type": "code", **options})
    made._backend_override = backend  # the documented test-only hook
    return made


def call_row(completion: str, cases: list) -> Sample:
    return Sample(prompt="", completion=completion, fields={"tests": cases, "entry_point": "f"})


@pytest.mark.slow
def test_a_costly_returned_value_scores_0_and_the_batch_goes_on(backend):
    code = verifier(backend, timeout_s=40, max_job_s=90, host_timeout_s=0.5)
    attack = call_row(COLLIDING_SOLUTION, [{"args": [1], "expected": [1, 1]}])
    honest = call_row(HONEST_CALL, [{"args": [1], "expected": [1, 1]}, {"args": [3], "expected": [3, 3]}])
    bad, good = code.verify_batch([attack, honest])
    assert (bad.score, bad.status, bad.details.get("host_limit")) == (0.0, "ok", "timeout"), bad
    assert "host_timeout_s" in bad.feedback, bad.feedback
    assert (good.score, good.status) == (1.0, "ok"), good


@pytest.mark.slow
def test_honest_large_outputs_score_1(backend):
    code = verifier(backend, timeout_s=10)
    n = 20_000
    big_call = call_row(
        BIG_CALL, [{"args": [n], "expected": {"squares": [k * k for k in range(n)], "set": {"$set": list(range(n))}}}]
    )
    m = 40_000
    big_stdio = Sample(
        prompt="",
        completion=BIG_STDIO,
        fields={"tests": [{"input": f"{m}\n", "output": " ".join(repr(k / 7) for k in range(m))}]},
    )
    verdicts = code.verify_batch([big_call, big_stdio])
    for verdict in verdicts:
        assert (verdict.score, verdict.status) == (1.0, "ok"), verdict.feedback
        assert "host_limit" not in verdict.details


# -- what the verifier's own process still reads: only the part of a stream it shows ---------------


@pytest.mark.parametrize("filler", [0, 100, 10_000, 1 << 20])
def test_excerpts_read_only_what_they_show(filler):
    """A compiler's stderr may be 64 MiB; the excerpt of its head or tail is the same as if the whole
    text had been searched for paths to shorten, whatever lies beyond what is shown."""
    from rewardsmith.verifiers.code import _WORKDIR_PATH, _head, _tail

    frame = 'File "/tmp/rewardsmith-local-x/work/solution.py", line 3\n'
    text = frame + "x" * filler + "\n" + frame + "ValueError: boom"
    for excerpt, cut in (
        (_head, lambda t: t[:300] + ("…" if len(t) > 300 else "")),
        (_tail, lambda t: ("…" if len(t) > 300 else "") + t[-300:]),
    ):
        assert excerpt(text) == cut(_WORKDIR_PATH.sub(r'File "\1"', text.strip())), (excerpt.__name__, filler)
