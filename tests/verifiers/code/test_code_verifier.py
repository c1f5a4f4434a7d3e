"""The ``code`` verifier: every test form and checker, every per-test status, scoring, and
the tamper cases (each must fail, and the same harness must still pass a real solution).

Runs on the local sandbox backend. ``backend`` below wraps it so that ``run_batch`` runs on
long-lived threads: the local backend's runners die with the thread that started them
(PR_SET_PDEATHSIG), which would otherwise break every batch after the first.
"""

from __future__ import annotations

import json
import pickle
import shutil

import pytest

import rewardsmith.verifiers.code  # noqa: F401 - registers "code"
from rewardsmith.sandbox.backend import get_backend
from rewardsmith.sandbox.job import ExecResult, Job
from rewardsmith.verifiers import Sample, SpecError, build
from rewardsmith.verifiers.code import CodeVerifier, parse_records, score_tests
from rewardsmith.verifiers.code.harness import prepare_script
from rewardsmith.verifiers.code.tests import TestsError as BadTests  # a Test* name would look like a test class
from rewardsmith.verifiers.code.tests import (
    assemble_code,
    check_output,
    extract_code,
    from_dataset,
    normalize_tests,
    values_equal,
)


class CountingBackend:
    """The real local backend, counting run_batch calls (one per verify_batch is the contract)."""

    name = "local"

    def __init__(self) -> None:
        self.inner = get_backend("local")
        self.batches: list[int] = []

    def run(self, job: Job) -> ExecResult:
        return self.inner.run(job)

    def run_batch(self, jobs):
        self.batches.append(len(jobs))
        return self.inner.run_batch(jobs)


@pytest.fixture(scope="module")
def backend():
    return CountingBackend()


@pytest.fixture
def make(backend):
    def factory(**options) -> CodeVerifier:
        verifier = build({"type": "code", **options})
        verifier._backend_override = backend  # the documented test-only hook
        return verifier

    return factory


@pytest.fixture(scope="module")
def sandbox_pytest(backend) -> None:
    result = backend.run(Job(command=["python3", "-m", "pytest", "--version"]))
    if not (result.status == "ok" and result.exit_code == 0):
        pytest.skip("the sandbox's python3 cannot run pytest (apt-get install python3-pytest)")


def sample(completion, prompt="", **fields) -> Sample:
    return Sample(prompt=prompt, completion=completion, fields=fields)


ADD = "def add(a, b):\n    return a + b\n"
ADD_ASSERTS = ["assert add(1, 2) == 3", "assert add(2, 2) == 4", "assert add(-1, 1) == 0"]
ADD_CALLS = [{"args": [1, 2], "expected": 3}, {"args": [2, 2], "expected": 4}, {"args": [-1, 1], "expected": 0}]
HUMANEVAL_PROMPT = 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n'
HUMANEVAL_TEST = ("METADATA = {}\n\n\ndef check(candidate):\n"
                  "    assert candidate(1, 2) == 3\n    assert candidate(5, 5) == 10\n")


def statuses(verdict) -> list[str]:
    return [t["status"] for t in verdict.details["tests"]]


# -- pure helpers ------------------------------------------------------------------------------


def test_extract_code_prefers_the_last_block_of_the_language():
    text = "First:\n```python\nx = 1\n```\nthen\n```js\nlet y\n```\nfinally\n```python\nx = 2\n```\n"
    assert extract_code(text) == "x = 2\n"
    assert extract_code("```\nprint(1)\n```") == "print(1)\n"  # bare fences count
    assert extract_code("def f():\n    return 1\n") == "def f():\n    return 1\n"  # no fence: the whole text
    assert extract_code("text\n```python\ndef f():\n    return 1") == "def f():\n    return 1"  # cut off
    assert extract_code("```cpp\nint main(){}\n```\n```python\nx=1\n```", "cpp") == "int main(){}\n"


def test_normalize_every_form_and_json_strings():
    assert normalize_tests(ADD_ASSERTS).form == "script"
    assert normalize_tests(json.dumps(ADD_ASSERTS)).form == "script"
    assert normalize_tests(HUMANEVAL_TEST, entry_point="add").form == "script"
    calls = normalize_tests(json.dumps(ADD_CALLS), entry_point="add")
    assert calls.form == "call" and calls.cases[0] == {"args": [1, 2], "kwargs": {}, "expected": 3}
    assert "expected" not in json.dumps(calls.wire())  # the harness never receives expected values
    stdio = normalize_tests(json.dumps([{"input": "1\n", "output": "1\n"}]))
    assert stdio.form == "stdio" and stdio.cases == [{"input": "1\n", "output": "1\n"}]
    assert normalize_tests({"inputs": ["1"], "outputs": ["2"]}).form == "stdio"  # APPS layout
    assert normalize_tests(json.dumps({"pytest": "def test_x():\n    assert True\n"})).form == "pytest"
    assert normalize_tests(None, pytest_source="def test_x():\n    pass\n").form == "pytest"
    with_checker = normalize_tests({"cases": [{"input": "", "output": "1"}], "checker": "float"})
    assert with_checker.checker == "float"


@pytest.mark.parametrize("tests", [None, "", "[]", "{not json", "def check(candidate):\n    assert 1\n",
                                   "x = (", "print('no asserts')", [{"foo": 1}], [1, 2], 42,
                                   [{"args": [1], "expected": 1}]])
def test_normalize_rejects_missing_or_malformed_tests(tests):
    with pytest.raises(BadTests):
        normalize_tests(tests)  # no entry_point anywhere here


def test_values_equal_is_strict_about_types_and_tolerant_only_for_float_expectations():
    assert values_equal(0.1 + 0.2, 0.3)
    assert not values_equal(0.31, 0.3)
    assert values_equal(2.0, 2) and values_equal((1, [2, 3]), [1, [2, 3]])  # exactly the number; JSON has no tuples
    assert not values_equal(True, 1) and not values_equal(1, True)
    fib60 = 1548008755920
    assert not values_equal(float(fib60 + 1_400_000), fib60)  # an int is exact: no relative tolerance
    assert not values_equal(fib60 + 1, fib60) and values_equal(fib60, fib60)
    assert not values_equal({1, 2}, [2, 1]) and not values_equal({1, 2}, [1, 2, 2])  # a set equals only a set
    assert values_equal({1, 2}, from_dataset({"$set": [2, 1]}))
    assert values_equal({1: "a"}, {"1": "a"})  # JSON object keys are strings
    assert values_equal(float("nan"), from_dataset({"$float": "nan"}))
    assert not values_equal({"a": 1}, {"a": 1, "b": 2})
    assert values_equal(10**5000, from_dataset({"$int": hex(10**5000)}))  # tagged big ints are decoded
    assert not values_equal(10**5000 + 1, from_dataset({"$int": hex(10**5000)}))
    assert not values_equal("passed", True) and not values_equal({"$int": "0x78"}, 120)


@pytest.mark.parametrize(("checker", "expected", "actual", "ok"), [
    ("exact", "1 2\n", "1 2", True), ("exact", "1 2\n", "1  2\n", False), ("exact", "a\r\nb\n", "a\nb", True),
    ("whitespace", "1 2\n3\n", "1\n2 3", True), ("whitespace", "1 2", "1 3", False),
    ("float", "0.3333333 x", "0.33333334 x", True), ("float", "1.0", "1.1", False), ("float", "1 2", "1", False),
    ("tokens_ci", "YES\nno", "yes NO", True), ("tokens_ci", "YES", "YE S", False),
])
def test_named_checkers(checker, expected, actual, ok):
    assert check_output(checker, expected, actual) is ok


def test_assemble_code_prepends_the_prompt_when_it_should():
    body = "    return a + b\n"
    code, prelude = assemble_code(body, HUMANEVAL_PROMPT, "add", "auto")
    assert code == HUMANEVAL_PROMPT + body and prelude == HUMANEVAL_PROMPT
    code, _ = assemble_code(ADD, HUMANEVAL_PROMPT, "add", "auto")
    assert code.endswith(ADD) and code.startswith(HUMANEVAL_PROMPT.rstrip())  # imports and helpers kept
    assert assemble_code(ADD, "Write an add function.", "add", "auto") == (ADD, "")
    assert assemble_code(body, "Write an add function.", "add", "auto") == (body, "")  # words are not code
    assert assemble_code(body, HUMANEVAL_PROMPT, "add", False) == (body, "")


def test_prepare_script_makes_every_top_level_statement_a_unit():
    # The module's statements, then check's: which of them are tests is decided when they run.
    prepared = prepare_script(HUMANEVAL_TEST, "add")
    assert prepared["check_mode"] and prepared["names"][0] == "METADATA = {}"
    assert prepared["names"][1].startswith("def check(candidate):")
    assert prepared["names"][2:] == ["assert candidate(1, 2) == 3", "assert candidate(5, 5) == 10"]
    source = "".join(prepared["statements"])
    assert "__h_cmp" in source and "__h_begin(3)" in source and "__h_close(0)" in source


def test_parse_records_only_trusts_the_nonce_and_flags_duplicates():
    good = 'RESULT abc {"plan": ["t"]}\nRESULT abc {"i": 0, "status": "passed"}\nRESULT abc {"done": true}\n'
    records = parse_records('RESULT zzz {"i": 0, "status": "passed"}\n' + good, "abc")
    assert records.plan == ["t"] and records.tests[0]["status"] == "passed" and records.done
    assert records.forged == 1 and not records.tamper
    doubled = parse_records(good + 'RESULT abc {"i": 0, "status": "passed"}\n', "abc")
    assert doubled.tamper


def test_score_modes():
    tests = [{"name": f"t{i}", "status": s, "reason": "r"} for i, s in
             enumerate(["passed", "passed", "wrong_answer", "passed"])]
    assert score_tests(tests, "all").score == 0.0
    assert score_tests(tests, "fraction").score == 0.75
    assert score_tests(tests, "first_k", k=2).score == 1.0
    assert score_tests(tests, "first_k", k=3).score == 0.0
    verdict = score_tests(tests, "fraction")
    assert verdict.correct is False and verdict.feedback.startswith("test 3/4 failed (wrong_answer): t2")


# -- the forms, end to end ---------------------------------------------------------------------


def test_assert_script_mbpp_style(make):
    good, bad = make().verify_batch([sample(ADD, tests=ADD_ASSERTS), sample(ADD.replace("+", "-"), tests=ADD_ASSERTS)])
    assert (good.score, good.correct, good.status) == (1.0, True, "ok") and statuses(good) == ["passed"] * 3
    assert bad.score == 0.0 and bad.correct is False and statuses(bad)[0] == "wrong_answer"
    assert "-1 == 3" in bad.feedback and "assert add(1, 2) == 3" in bad.feedback


def test_assert_script_with_setup_imports(make):
    tests = ["assert math.isclose(area(2), 12.566, rel_tol=1e-3)"]
    code = "import math\ndef area(r):\n    return math.pi * r * r\n"
    verdict = make().verify(sample(code, tests=tests, test_imports=["import math"]))
    assert verdict.correct, verdict.feedback


def test_humaneval_body_continuation_and_full_function(make):
    verifier = make()
    body = sample("    return a + b\n", prompt=HUMANEVAL_PROMPT, tests=HUMANEVAL_TEST, entry_point="add")
    full = sample(f"Here you go:\n```python\n{ADD}```", prompt=HUMANEVAL_PROMPT, tests=HUMANEVAL_TEST,
                  entry_point="add")
    wrong = sample("    return a * b\n", prompt=HUMANEVAL_PROMPT, tests=HUMANEVAL_TEST, entry_point="add")
    b, f, w = verifier.verify_batch([body, full, wrong])
    assert b.correct and f.correct and not w.correct
    assert statuses(w) == ["wrong_answer", "wrong_answer"]
    assert make(prepend_prompt=False).verify(body).details["tests"][0]["status"] == "compile_error"


def test_function_call_cases_compare_on_the_host(make):
    verifier = make(rel_tol=1e-3)
    cases = [{"args": [1.0, 2.0], "expected": 3.0001}, {"args": [[1], [2]], "kwargs": {}, "expected": [1, 2]},
             {"args": [], "kwargs": {"a": "x", "b": "y"}, "expected": "xy"}]
    good = verifier.verify(sample(ADD, tests=json.dumps(cases), entry_point="add"))
    assert good.correct, good.feedback
    tuples = verifier.verify(sample("def f():\n    return (1, {2: 'a'})\n", entry_point="f",
                                    tests=[{"args": [], "expected": [1, {"2": "a"}]}]))
    assert tuples.correct, tuples.feedback
    bad = make().verify(sample(ADD, tests=[{"args": [1.0, 2.0], "expected": 3.0001}], entry_point="add"))
    assert not bad.correct and "expected 3.0001" in bad.feedback
    missing = make().verify(sample("def other():\n    pass\n", tests=ADD_CALLS, entry_point="add"))
    assert statuses(missing) == ["runtime_error"] * 3 and "does not define" in missing.feedback


@pytest.mark.parametrize(("checker", "program", "ok"), [
    ("whitespace", "print(*input().split(), sep='\\n')", True),
    ("exact", "print(*input().split(), sep='\\n')", False),
    ("exact", "print(input())", True),
    ("float", "print(float(input()) / 3)", True),
    ("tokens_ci", "print(input().upper())", True),
])
def test_stdio_cases_with_named_checkers(make, checker, program, ok):
    cases = [{"input": "1 2\n", "output": "1 2\n"}] if checker != "float" else [{"input": "1\n", "output": "0.333333"}]
    if checker == "tokens_ci":
        cases = [{"input": "yes no\n", "output": "Yes No"}]
    verdict = make(checker=checker).verify(sample(program, tests=cases))
    assert verdict.correct is ok, verdict.feedback


def test_stdio_runs_each_case_as_a_fresh_process(make, backend):
    program = "import os\nprint(os.path.exists('marker'))\nopen('marker', 'w').close()"
    cases = [{"input": "", "output": "False"}] * 3
    before = len(backend.batches)
    verdict = make().verify(sample(program, tests=cases))
    assert verdict.correct, verdict.feedback
    assert backend.batches[before:] == [3]  # one job per case, all in one batch


CHECKER = """
import sys
inp, exp, act = (open(p).read() for p in sys.argv[1:4])
# accept any permutation of the expected numbers
sys.exit(0 if sorted(act.split()) == sorted(exp.split()) else 1)
"""


def test_stdio_custom_checker_program(make):
    cases = [{"input": "3 1 2\n", "output": "1 2 3\n"}]
    verifier = make(checker=CHECKER)
    good = verifier.verify(sample("print(*input().split()[::-1])", tests=cases))
    bad = verifier.verify(sample("print(1, 2)", tests=cases))
    assert good.correct and good.score == 1.0, good.feedback
    assert not bad.correct and statuses(bad) == ["wrong_answer"] and "rejected by the checker" in bad.feedback
    per_sample = make().verify(sample("print(*input().split()[::-1])", tests={"cases": cases, "checker": CHECKER}))
    assert per_sample.correct


def test_stdio_checker_that_hangs_on_the_expected_output_is_invalid_input(make):
    # It hangs on every output, the expected one too: the row's checker is broken, not the answer.
    verdict = make(checker="while True:\n    pass\n", timeout_s=1).verify(
        sample("print(1)", tests=[{"input": "", "output": "1"}]))
    assert verdict.status == "invalid_input" and verdict.score == 0.0, verdict.feedback
    assert "expected output" in verdict.feedback


PYTEST_FILE = """
import pytest
from solution import add

def test_small():
    assert add(1, 2) == 3

@pytest.mark.parametrize("a,b,c", [(1, 1, 2), (2, 3, 5)])
def test_param(a, b, c):
    assert add(a, b) == c

def test_approx():
    assert add(0.1, 0.2) == pytest.approx(0.3)

@pytest.mark.skip(reason="declared by the test file")
def test_skipped():
    assert False
"""


def test_pytest_file(make, sandbox_pytest):
    verifier = make(score="fraction")
    good, bad, field = verifier.verify_batch([
        sample(ADD, tests={"pytest": PYTEST_FILE}),
        sample("def add(a, b):\n    return a + b if a > 1 else -1\n", tests=json.dumps({"pytest": PYTEST_FILE})),
        sample(ADD, pytest=PYTEST_FILE),
    ])
    assert good.correct and good.score == 1.0 and good.details["total"] == 4, good.feedback
    assert statuses(good).count("skipped") == 1  # declared skips do not count
    assert statuses(bad) == ["wrong_answer", "wrong_answer", "passed", "wrong_answer", "skipped"]
    assert bad.score == pytest.approx(1 / 4)
    assert field.correct


def test_pytest_file_compile_error(make, sandbox_pytest):
    verdict = make().verify(sample("def add(a, b)\n    return a\n", tests={"pytest": PYTEST_FILE}))
    assert statuses(verdict) == ["compile_error"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed on this machine")
def test_cpp_stdio(make):
    cases = [{"input": "1 2\n", "output": "3\n"}, {"input": "20 22\n", "output": "42\n"}]
    program = "```cpp\n#include <iostream>\nint main(){long a,b;std::cin>>a>>b;std::cout<<a+b<<'\\n';}\n```"
    verifier = make(language="cpp", score="fraction", timeout_s=2)
    good, wrong, broken, loop = verifier.verify_batch([
        sample(program, tests=cases), sample(program.replace("a+b", "a*b"), tests=cases),
        sample("```cpp\nint main(){ return x; }\n```", tests=cases),
        sample("```cpp\nint main(){ volatile int x = 0; for(;;) x++; }\n```", tests=cases)])
    assert good.correct, good.feedback
    assert wrong.score == 0.0 and statuses(wrong) == ["wrong_answer", "wrong_answer"]
    assert statuses(broken) == ["compile_error"] * 2 and "not declared" in broken.feedback
    assert statuses(loop) == ["timeout"] * 2
    assert verifier.verify(sample(program, tests=ADD_ASSERTS)).status == "invalid_input"


# -- per-test statuses ---------------------------------------------------------------------------

STATUS_PROGRAMS = {
    "timeout": "def f(x):\n    while True:\n        pass\n",
    "memory_limit": "def f(x):\n    block = bytearray(2 * 1024 ** 3)\n    return x\n",
    "output_limit": "def f(x):\n    print('x' * 3_000_000)\n    return x\n",
    "runtime_error": "def f(x):\n    return 1 // 0\n",
    "compile_error": "def f(x)\n    return x\n",
    "wrong_answer": "def f(x):\n    return x + 1\n",
    "passed": "def f(x):\n    return x\n",
}
STDIO_PROGRAMS = {
    "timeout": "while True:\n    pass\n",
    "memory_limit": "block = bytearray(2 * 1024 ** 3)\n",
    "output_limit": "print('x' * 3_000_000)\n",
    "runtime_error": "print(1 // 0)\n",
    "compile_error": "print(input()\n",
    "wrong_answer": "print(int(input()) + 1)\n",
    "passed": "print(input())\n",
}


@pytest.mark.parametrize("form", ["script", "call", "stdio"])
def test_every_per_test_status(make, form):
    verifier = make(timeout_s=1, memory_mb=256, score="fraction")
    if form == "stdio":
        samples = [sample(p, tests=[{"input": "1\n", "output": "1\n"}]) for p in STDIO_PROGRAMS.values()]
    elif form == "call":
        samples = [sample(p, tests=[{"args": [1], "expected": 1}], entry_point="f") for p in STATUS_PROGRAMS.values()]
    else:
        samples = [sample(p, tests=["assert f(1) == 1"]) for p in STATUS_PROGRAMS.values()]
    for expected, verdict in zip(STATUS_PROGRAMS, verifier.verify_batch(samples), strict=True):
        assert verdict.status == "ok"
        assert statuses(verdict) == [expected], (form, expected, verdict.feedback)
        assert verdict.correct is (expected == "passed")


def test_a_failing_test_does_not_stop_the_others(make):
    program = "def f(x):\n    if x == 2:\n        while True:\n            pass\n    return 1 // (x - 3)\n"
    tests = ["assert f(1) == -1", "assert f(2) == 0", "assert f(3) == 0", "assert f(4) == 1"]
    verdict = make(timeout_s=1, score="fraction").verify(sample(program, tests=tests))
    assert statuses(verdict) == ["passed", "timeout", "runtime_error", "passed"]
    assert verdict.score == 0.5 and verdict.feedback.startswith("test 2/4 failed (timeout): assert f(2) == 0")


def test_output_excerpts_are_per_test(make):
    program = "def f(x):\n    print('hello', x)\n    return x\n"
    verdict = make().verify(sample(program, tests=["assert f(1) == 1", "assert f(2) == 2"]))
    assert [t["stdout"] for t in verdict.details["tests"]] == ["hello 1\n", "hello 2\n"]


# -- scoring and feedback through the verifier ---------------------------------------------------


def test_scoring_modes_end_to_end(make):
    program = "def add(a, b):\n    return 3\n"  # passes the first test only
    scores = {mode: make(score=mode, k=1).verify(sample(program, tests=ADD_ASSERTS)).score
              for mode in ("all", "fraction", "first_k")}
    assert scores == {"all": 0.0, "fraction": pytest.approx(1 / 3), "first_k": 1.0}
    assert make(score="first_k", k=2).verify(sample(program, tests=ADD_ASSERTS)).score == 0.0


def test_statuses_for_bad_rows(make):
    verifier = make()
    no_tests, bad_json, empty, chat, bad_completion = verifier.verify_batch([
        sample(ADD), sample(ADD, tests="[{not json"), sample("", tests=ADD_ASSERTS),
        sample([{"role": "user", "content": "write add"}, {"role": "assistant", "content": f"```python\n{ADD}```"}],
               tests=ADD_ASSERTS),
        Sample(prompt="", completion=42, fields={"tests": ADD_ASSERTS}),
    ])
    assert no_tests.status == "invalid_input" and "no tests" in no_tests.feedback
    assert bad_json.status == "invalid_input"
    assert empty.status == "no_answer" and empty.score == 0.0
    assert chat.correct and chat.status == "ok"
    assert bad_completion.status == "invalid_input"


def test_options_are_checked_at_build_time():
    for bad in ({"score": "best"}, {"language": "rust"}, {"k": 0}, {"checker": "fuzzy"}, {"nope": 1}):
        with pytest.raises(SpecError):
            build({"type": "code", **bad})


def test_picklable_and_configuration_only(make):
    verifier = make(score="fraction", timeout_s=2)
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone.score == "fraction" and clone.timeout_s == 2 and clone._backend_override is None
    assert clone.backend == "auto"


class FakeBackend:
    """Answers every job with a sandbox failure (or raises): the verdict must be an error, not 0."""

    name = "fake"

    def __init__(self, raises: bool = False) -> None:
        self.raises = raises

    def run(self, job):
        return self.run_batch([job])[0]

    def run_batch(self, jobs):
        if self.raises:
            raise RuntimeError("engine went away")
        return [ExecResult("error", error="container vanished") for _ in jobs]

    def close(self):
        pass


def test_unavailable_backend_is_an_error_verdict(monkeypatch):
    import rewardsmith.sandbox.backend as backend_module

    def no_engine(kind="auto", concurrency=None):
        raise RuntimeError("no Docker engine answers")

    monkeypatch.setattr(backend_module, "get_backend", no_engine)
    verdict = CodeVerifier(backend="docker").verify(sample(ADD, tests=ADD_ASSERTS))
    assert verdict.status == "error" and "no Docker engine answers" in verdict.feedback


@pytest.mark.parametrize("raises", [False, True])
@pytest.mark.parametrize("tests", [ADD_ASSERTS, [{"input": "1", "output": "1"}]])
def test_backend_error_is_an_error_verdict(tests, raises):
    verifier = CodeVerifier()
    verifier._backend_override = FakeBackend(raises)
    verdict = verifier.verify(sample(ADD, tests=tests, entry_point="add"))
    assert verdict.status == "error" and verdict.reward is None and verdict.correct is None
    assert "container vanished" in verdict.feedback or "engine went away" in verdict.feedback


def test_batch_is_one_run_batch_with_one_job_per_sample(make, backend):
    verifier = make()
    samples = [sample(ADD, tests=ADD_ASSERTS), sample(ADD, tests=ADD_CALLS, entry_point="add"),
               sample(ADD.replace("+", "-"), tests=ADD_ASSERTS), sample(ADD, tests=ADD_ASSERTS)]  # last: a duplicate
    before = len(backend.batches)
    verdicts = verifier.verify_batch(samples)
    assert backend.batches[before:] == [3]  # three distinct programs, one job each, one batch
    assert [v.correct for v in verdicts] == [True, True, False, True]
    assert verdicts[3] is not verdicts[0] and verdicts[3].details == verdicts[0].details


# -- tamper-proofing: none of these may pass; the legitimate solution must ----------------------

TAMPER = {
    "os._exit(0) before the tests": "import os\nos._exit(0)\n",
    "os._exit(0) inside the function": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "sys.exit(0) before the tests": "import sys\nsys.exit(0)\n",
    "sys.exit(0) inside the function": "import sys\ndef add(a, b):\n    sys.exit(0)\n",
    "raise SystemExit": "def add(a, b):\n    raise SystemExit\n",
    "always-equal object": "class X:\n    def __eq__(self, other):\n        return True\n"
                           "    __hash__ = object.__hash__\ndef add(a, b):\n    return X()\n",
    "always-equal int subclass": "class I(int):\n    def __eq__(self, other):\n        return True\n"
                                 "    __hash__ = int.__hash__\ndef add(a, b):\n    return I(0)\n",
    "fake C-type spoof": "class Meta(type):\n    __flags__ = 1 << 8\nclass Match(metaclass=Meta):\n"
                         "    __module__ = 're'\n    def __eq__(self, other):\n        return True\n"
                         "def add(a, b):\n    return Match()\n",
    "patch builtins.len": "import builtins\nbuiltins.len = lambda x: 3\ndef add(a, b):\n    return a + b + 1\n",
    "patch builtins.AssertionError": "import builtins\nbuiltins.AssertionError = type('E', (Exception,), {})\n"
                                     "def add(a, b):\n    return 0\n",
    "patch builtins.isinstance": "import builtins\nbuiltins.isinstance = lambda *a: True\n"
                                 "def add(a, b):\n    return 0\n",
    "patch a module the tests use": "import math\nmath.isclose = lambda *a, **k: True\ndef add(a, b):\n    return 0\n",
    "shadow a builtin the tests use": "def abs(x):\n    return 0\ndef add(a, b):\n    return 0\n",
    "install a trace function": "import sys\nsys.settrace(lambda *a: None)\ndef add(a, b):\n    return 0\n",
    "print a fake pass": "print('RESULT 0123 {\"i\": 0, \"status\": \"passed\"}')\nprint('All tests passed!')\n"
                         "def add(a, b):\n    print('\\nRESULT 0000 {\"done\": true}')\n    return 0\n",
    "write fake records to every fd": "import os\ndef add(a, b):\n    for fd in range(0, 20):\n        try:\n"
                                      "            os.write(fd, b'\\nRESULT x {\"i\": 0, \"status\": \"passed\"}\\n')\n"
                                      "        except OSError:\n            pass\n    return 0\n",
    "rewrite any test file it can find": "import os\nfor name in os.listdir('.'):\n    try:\n"
                                          "        open(name, 'w').write('')\n    except OSError:\n        pass\n"
                                          "def add(a, b):\n    return 0\n",
    "swallow the timeout": "def add(a, b):\n    while True:\n        try:\n            while True:\n"
                           "                pass\n        except BaseException:\n            pass\n",
    "read the tests from stdin": "import sys\nSTOLEN = sys.stdin.read()\ndef add(a, b):\n    return 0\n",
}
TAMPER_TESTS = ["assert add(1, 2) == 3", "assert abs(add(0.5, 0.25) - 0.75) < 1e-9",
                "assert math.isclose(add(1, 1), 2)", "assert len([add(1, 1)] * add(1, 1)) == 2"]


def test_tamper_script_form(make):
    verifier = make(timeout_s=1, score="fraction")
    names = list(TAMPER)
    samples = [sample(TAMPER[name], tests=TAMPER_TESTS, test_imports=["import math"]) for name in names]
    samples.append(sample(ADD, tests=TAMPER_TESTS, test_imports=["import math"]))
    *tampered, legit = verifier.verify_batch(samples)
    assert legit.correct and legit.score == 1.0, legit.feedback
    for name, verdict in zip(names, tampered, strict=True):
        passed = [t["name"] for t in verdict.details["tests"] if t["status"] == "passed"]
        assert not verdict.correct and verdict.score == 0.0 and not passed, (name, verdict.feedback, passed)


def test_the_solution_patching_its_own_process_does_not_reach_the_tests(make):
    tests = ["assert len([add(1, 1)]) == 1", "assert add(1, 2) == 3", "assert math.isclose(add(1, 1), 2)"]
    honest = "import math, string\nstring.digits = ''\nmath.isclose = lambda *a, **k: False\n" + ADD
    cheat = "import math\nmath.isclose = lambda *a, **k: True\ndef add(a, b):\n    return 0\n"
    honest_v, cheat_v = make().verify_batch([sample(honest, tests=tests, test_imports=["import math"]),
                                             sample(cheat, tests=tests, test_imports=["import math"])])
    assert honest_v.correct, honest_v.feedback  # the tests use the judge's len and math, not the solution's
    assert not cheat_v.correct and cheat_v.score == 0.0
    assert statuses(cheat_v) == ["passed", "wrong_answer", "wrong_answer"]
    assert "0 == 3 is false" in cheat_v.feedback, cheat_v.feedback


def test_tamper_humaneval_helper_redefinition(make):
    prompt = 'def helper(x):\n    return x * 2\n\n\ndef f(x):\n    """Return helper(x) + 1."""\n'
    tests = "def check(candidate):\n    assert helper(candidate(3)) == 14\n    assert candidate(1) == 3\n"
    cheat = "def helper(x):\n    return 14\n\n\ndef f(x):\n    return 3\n"
    honest = "def f(x):\n    return helper(x) + 1\n"
    cheat_v, honest_v = make().verify_batch([sample(cheat, prompt=prompt, tests=tests, entry_point="f"),
                                             sample(honest, prompt=prompt, tests=tests, entry_point="f")])
    assert honest_v.correct, honest_v.feedback
    assert not cheat_v.correct  # the test's helper is the prompt's, not the solution's redefinition


def test_tamper_function_call_form(make):
    verifier = make(timeout_s=1)
    cheats = [TAMPER["always-equal object"], TAMPER["os._exit(0) inside the function"], TAMPER["print a fake pass"],
              TAMPER["sys.exit(0) before the tests"], "def add(a, b):\n    return float('nan')\n"]
    *verdicts, legit = verifier.verify_batch([sample(c, tests=ADD_CALLS, entry_point="add") for c in cheats]
                                             + [sample(ADD, tests=ADD_CALLS, entry_point="add")])
    assert legit.correct
    for code, verdict in zip(cheats, verdicts, strict=True):
        assert not verdict.correct and verdict.score == 0.0, (code, verdict.feedback)


def test_tamper_stdio_form(make):
    cases = [{"input": "2\n", "output": "4\n"}]
    fake = "import os\nprint('RESULT ok {\"status\": \"passed\"}')\nprint('All tests passed')\nos._exit(0)\n"
    verdicts = make().verify_batch([sample(fake, tests=cases), sample("print(int(input()) * 2)", tests=cases)])
    assert [v.correct for v in verdicts] == [False, True]


PYTEST_TAMPER = {
    "rewrite the test file": "import os\nos.chmod('test_solution.py', 0o644)\n"
                             "open('test_solution.py', 'w').write('def test_small():\\n    pass\\n')\n"
                             "def add(a, b):\n    return 0\n",
    "os._exit(0) on import": "import os\nos._exit(0)\n",
    "sys.exit(0) on import": "import sys\nsys.exit(0)\n",
    "always-equal object": TAMPER["always-equal object"],
    "skip from the solution": "import pytest\ndef add(a, b):\n    pytest.skip('no')\n",
    "patch a pytest method": "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"
                             "def add(a, b):\n    return 0\n",
    "replace a pytest function's code": "import _pytest.python\nfake = lambda pyfuncitem: True\n"
                                        "_pytest.python.pytest_pyfunc_call.__code__ = fake.__code__\n"
                                        "def add(a, b):\n    return 0\n",
    "print a fake pass": TAMPER["print a fake pass"],
}


def test_tamper_pytest_form(make, sandbox_pytest):
    verifier = make(timeout_s=2)
    names = list(PYTEST_TAMPER)
    *verdicts, legit = verifier.verify_batch([sample(PYTEST_TAMPER[n], tests={"pytest": PYTEST_FILE}) for n in names]
                                             + [sample(ADD, tests={"pytest": PYTEST_FILE})])
    assert legit.correct, legit.feedback
    for name, verdict in zip(names, verdicts, strict=True):
        assert not verdict.correct and verdict.score == 0.0, (name, verdict.feedback)


# -- the judge's treatment of values that are not plain data, in-place changes, exceptions ----------

OBJECTS_TESTS = [
    "a = [3, 1, 2]; sort_in_place(a); assert a == [1, 2, 3]",  # copied back into the test's list
    "b = [2, 1]; assert sort_in_place(b) is b",  # the same object comes back
    "assert list(squares(3)) == [0, 1, 4]",  # a generator stays in the solution's process: iterated remotely
    "root = Node(1); root.left = Node(2); root.left.left = Node(3); assert depth(root) == 3",
    "assert Node(5).value == 5 and str(Node(7)) == 'Node(7)'",
    "d = {}; fill(d); assert d == {'k': 1}",
]
OBJECTS_SOLUTION = """
class Node:
    def __init__(self, value):
        self.value, self.left, self.right = value, None, None
    def __str__(self):
        return f"Node({self.value})"

def depth(node):
    return 0 if node is None else 1 + max(depth(node.left), depth(node.right))

def sort_in_place(items):
    items.sort()
    return items

def squares(n):
    for i in range(n):
        yield i * i

def fill(d):
    d["k"] = 1
"""


def test_objects_generators_and_in_place_changes_work_across_the_boundary(make):
    verdict = make().verify(sample(OBJECTS_SOLUTION, tests=OBJECTS_TESTS))
    assert verdict.correct, verdict.feedback
    wrong = OBJECTS_SOLUTION.replace("items.sort()", "items = sorted(items)").replace('d["k"] = 1', 'd["k"] = 2')
    verdict = make(score="fraction").verify(sample(wrong, tests=OBJECTS_TESTS))
    assert statuses(verdict) == ["wrong_answer", "wrong_answer", "passed", "passed", "passed", "wrong_answer"]


def test_comparing_a_value_that_is_not_plain_data_is_unsupported(make):
    always_equal = "class T:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\n" \
                   "def f(x):\n    return T()\n"
    tests = ["assert f(1) == 2", "assert f(1) != 3", "assert 2 in [f(1)]", "assert sorted([f(1), f(2)])"]
    verdict = make(score="fraction").verify(sample(always_equal, tests=tests))
    assert statuses(verdict) == ["unsupported_value"] * 4 and verdict.score == 0.0


def test_builtin_exceptions_are_raised_as_the_judges_own(make, sandbox_pytest):
    pytest_file = ("import pytest\nfrom solution import *\n\ndef test_raises():\n"
                   "    with pytest.raises(ValueError):\n        root(-1)\n\n"
                   "def test_value():\n    assert root(4) == 2\n")
    honest = "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return int(x ** 0.5)\n"
    custom = "class ValueError(Exception):\n    pass\n\n" + honest  # not the builtin: does not satisfy the test
    good, bad = make().verify_batch([sample(honest, tests={"pytest": pytest_file}),
                                     sample(custom, tests={"pytest": pytest_file})])
    assert good.correct, good.feedback
    assert not bad.correct and statuses(bad)[0] == "runtime_error", bad.feedback


def test_star_import_exports_nothing_pytest_gives_meaning_to(make, sandbox_pytest):
    pytest_file = "from solution import *\n\ndef test_one():\n    assert add(1, 2) == 3\n\ndef test_two():\n" \
                  "    assert add(2, 2) == 5\n"
    cheats = [ADD + "import pytest\npytestmark = pytest.mark.skip\n",
              ADD + "def test_two():\n    pass\n",
              ADD + "def setup_module(module):\n    module.test_two = lambda: None\n",
              ADD + "pytest_plugins = ['no_such_plugin']\n"]
    verdicts = make(score="fraction").verify_batch([sample(c, tests={"pytest": pytest_file}) for c in cheats])
    for code, verdict in zip(cheats, verdicts, strict=True):
        assert statuses(verdict) == ["passed", "wrong_answer"], (code, verdict.feedback)
        assert verdict.score == 0.5
