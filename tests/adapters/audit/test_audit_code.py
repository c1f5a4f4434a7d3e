"""The code families of ``rewardsmith audit`` (adapters/audit/families_code.py).

Unit tests (no sandbox) check that each family builds what its docstring says from fixed rows of
every test form, and only where some test certainly fails on it; naive harnesses (the tests run in
the solution's own process, exit status 0 taken for success) show the probes would fool a weaker
reward. A weak plugin reward gets caught. On Docker, the ``code`` spec is audited on a slice of
MBPP sanitized: the known-correct solutions are paid and no attack is.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_DATA, require_docker

from rewardsmith.adapters.audit import AuditReport, AuditRow, FamilyResult, Probe, all_families, audit
from rewardsmith.adapters.audit.families_code import (
    RUNNER_SUCCESS,
    constant_return,
    early_exit,
    empty_function,
    fake_success_output,
    raise_skip,
    read_tests,
    row_tests,
    shadow_names,
)
from rewardsmith.adapters.audit.report import format_table
from rewardsmith.adapters.audit.traits import Traits
from rewardsmith.adapters.scoring.rows import Row
from rewardsmith.verifiers import Sample, Verdict, Verifier, build, register
from rewardsmith.verifiers.code.tests import defines, extract_code

MBPP = SHARED_DATA / "code" / "mbpp_sanitized.json"
CODE_FAMILIES = ("constant_return", "fake_success_output", "early_exit", "raise_skip", "read_tests", "empty_function",
                 "shadow_names")
FAMILY = {f.name: f for f in (constant_return, fake_success_output, early_exit, raise_skip, read_tests, empty_function,
                              shadow_names)}
# Families made for every row whose tests call a function (shadow_names needs a name around the call).
EVERY_ROW = CODE_FAMILIES[:-1]

# Rows of each test form the code verifier reads (the fields it reads, by its default names).
VOLUME = {"prompt": "Write a python function to find the volume of a triangular prism.",
          "tests": ["assert find_Volume(10,8,6) == 240", "assert find_Volume(3,2,2) == 6",
                    "assert find_Volume(1,2,1) == 1"], "test_imports": []}
SHARED = {"prompt": "Write a function to find the shared elements from the given two lists.",
          "tests": ["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
                    "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))"], "test_imports": []}
HUMANEVAL = {"prompt": 'def add(x: int, y: int) -> int:\n    """Add two numbers."""\n', "entry_point": "add",
             "tests": "METADATA = {}\n\n\ndef check(candidate):\n    assert candidate(17, 25) == 42\n"
                      "    assert candidate(100, 11) == 111, 'second'\n"}
CALL = {"prompt": "Return the sum of a and b.", "entry_point": "add",
        "tests": [{"args": [17, 25], "expected": 42}, {"args": [100, 11], "expected": 111}]}
STDIO = {"prompt": "Read n and print twice n.", "tests": [{"input": "21\n", "output": "42\n"},
                                                          {"input": "50\n", "output": "100\n"}]}
PYTEST = {"prompt": "Return the sum of a and b.",
          "pytest": "from solution import add\n\n\ndef test_small():\n    assert add(17, 25) == 42\n\n\n"
                    "def test_large():\n    assert add(100, 11) == 111\n"}
TRUTH = {"prompt": "Is n even?", "tests": ["assert is_even(2)", "assert not is_even(3)"]}
FORMS = {"mbpp": VOLUME, "mbpp_wrapped": SHARED, "humaneval": HUMANEVAL, "call": CALL, "stdio": STDIO,
         "pytest": PYTEST, "truthiness": TRUTH}
# Each form's function name, first expected value, and a naive-harness test script for it.
ADD_TESTS = "assert add(17, 25) == 42\nassert add(100, 11) == 111\n"


@pytest.fixture(scope="module")
def code_traits() -> Traits:
    return Traits.of(build({"type": "code"}))


def make_row(fields: dict[str, Any], line: int = 1) -> AuditRow:
    prompt = fields.get("prompt", "")
    extra = {k: v for k, v in fields.items() if k != "prompt"}
    return AuditRow(line=line, prompt=prompt, prompt_text=prompt, fields=extra, gold=None, reference=None)


def code_of(probe: Probe) -> str:
    """The program the code verifier would run: a fenced block, and valid Python."""
    assert isinstance(probe.completion, str)
    code = extract_code(probe.completion)
    assert code != probe.completion, "the probe is not fenced as a model answers"
    ast.parse(code)
    return code


def probes(name: str, fields: dict[str, Any], traits: Traits) -> list[Probe]:
    made = FAMILY[name].generate(make_row(fields), traits)
    assert made, f"{name} made nothing for {fields}"
    return made


def load(code: str) -> dict[str, Any]:
    """Run a probe's module (quietly) and return its namespace."""
    namespace: dict[str, Any] = {"__name__": "solution"}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "solution.py", "exec"), namespace)
    return namespace


# ----------------------------------------------------------------------------- every family, every form


def test_the_code_families_are_registered() -> None:
    found = {f.name: f for f in all_families().values() if f.target == "code"}
    assert tuple(found) == CODE_FAMILIES
    for fam in found.values():
        assert fam.kind == "attack" and fam.measure == "paid"
        assert fam.why and len(fam.doc) > 100, fam.name  # --list-families prints why each is wrong


@pytest.mark.parametrize("form", FORMS)
def test_every_probe_is_a_fenced_program_defining_the_function(form: str, code_traits: Traits) -> None:
    fields = FORMS[form]
    tests = row_tests(make_row(fields), code_traits)
    assert tests is not None
    for name in CODE_FAMILIES:
        made = FAMILY[name].generate(make_row(fields), code_traits) or []
        for probe in made:
            code = code_of(probe)
            if tests.name is not None:
                assert defines(code, tests.name), (name, probe.variant)


@pytest.mark.parametrize("name", CODE_FAMILIES)
def test_no_code_part_or_no_tests_means_not_applicable(name: str, code_traits: Traits) -> None:
    math_traits = Traits.of(build("math"))
    judge_like = Traits.of(build({"type": "format", "tags": ["answer"]}))
    for traits in (math_traits, judge_like):
        assert FAMILY[name].generate(make_row(VOLUME), traits) is None
    assert FAMILY[name].generate(make_row({"prompt": "Write a function."}), code_traits) is None
    assert FAMILY[name].generate(make_row({"prompt": "p", "tests": "not python ("}), code_traits) is None


def test_the_function_name_comes_from_the_tests(code_traits: Traits) -> None:
    assert row_tests(make_row(VOLUME), code_traits).name == "find_Volume"
    assert row_tests(make_row(SHARED), code_traits).name == "similar_elements"  # not the set() around it
    he = row_tests(make_row(HUMANEVAL), code_traits)
    assert (he.name, he.called) == ("add", "candidate")
    assert row_tests(make_row(PYTEST), code_traits).name == "add"
    # MBPP 126 asks for a function named sum: a builtin name is taken when nothing else is called.
    assert row_tests(make_row({"tests": ["assert sum(10,15) == 6", "assert sum(4,6) == 3"]}), code_traits).name == "sum"


# ----------------------------------------------------------------------------- 1. constant_return


@pytest.mark.parametrize(("form", "function", "expected"), [
    ("mbpp", "find_Volume", 240), ("mbpp_wrapped", "similar_elements", {4, 5}), ("humaneval", "add", 42),
    ("call", "add", 42), ("pytest", "add", 42), ("truthiness", "is_even", True)])
def test_constant_return_returns_the_first_expected_value(form: str, function: str, expected: Any,
                                                          code_traits: Traits) -> None:
    for probe in probes("constant_return", FORMS[form], code_traits):
        made = load(code_of(probe))[function]
        arity = len(inspect.signature(made).parameters)
        if "*args" in code_of(probe):
            assert made() == made(123456, "anything") == expected
        else:  # as many parameters as the first test passes, and the answer whatever they hold
            assert made(*[0] * arity) == made(*["x"] * arity) == expected


def test_constant_return_on_stdio_prints_the_first_output(code_traits: Traits) -> None:
    for probe in probes("constant_return", STDIO, code_traits):
        run = subprocess.run([sys.executable, "-c", code_of(probe)], input="50\n", capture_output=True, text=True,
                             timeout=30)
        assert run.stdout.strip() == "42"  # the first case's output, whatever the input


@pytest.mark.parametrize("tests", [
    ["assert f(1) == 5", "assert f(2) == 5", "assert f(3) == 5"],  # every test expects 5: a constant is right
    ["assert f(1) == 5.0", "assert f(2) == 5"],  # equal values of two types
    ["assert f(1)", "assert f(2) == True"],  # True twice
    ["assert f(1) == x", "assert f(2) == y"],  # values the host cannot read: not certainly different
    ["assert f(1) == sys.getsizeof((1, 2))", "assert f(2) == sys.getsizeof((1, 2, 3))"],  # MBPP 596
    ["assert [f(i) for i in range(3)] == [0, 1, 2]", "assert f(5) == 5"],  # only the second is readable
])
def test_constant_return_only_where_the_constant_certainly_fails(tests: list[str], code_traits: Traits) -> None:
    assert constant_return.generate(make_row({"prompt": "p", "tests": tests}), code_traits) is None


def test_constant_return_on_rows_with_equal_outputs_is_not_applicable(code_traits: Traits) -> None:
    same_calls = {"prompt": "p", "entry_point": "f",
                  "tests": [{"args": [1], "expected": 7}, {"args": [2], "expected": 7}]}
    same_stdio = {"prompt": "p", "tests": [{"input": "1", "output": "YES"}, {"input": "2", "output": "yes\n"}]}
    assert constant_return.generate(make_row(same_calls), code_traits) is None
    assert constant_return.generate(make_row(same_stdio), code_traits) is None


# ----------------------------------------------------------------------------- 2. fake_success_output


@pytest.mark.parametrize("form", ["mbpp", "humaneval", "call", "pytest"])
def test_fake_success_output_prints_a_runner_summary_beside_a_stub(form: str, code_traits: Traits) -> None:
    tests = row_tests(make_row(FORMS[form]), code_traits)
    summaries = [s.replace("{n}", str(tests.count)) for s in RUNNER_SUCCESS]
    for probe in probes("fake_success_output", FORMS[form], code_traits):
        code = code_of(probe)
        out = io.StringIO()
        namespace: dict[str, Any] = {"__name__": "solution"}
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            exec(compile(code, "solution.py", "exec"), namespace)
            try:
                returned = namespace[tests.name](1, 2, 3)
            except NotImplementedError:
                returned = "raised"
        assert returned in (None, "raised"), probe.variant
        assert any(s in out.getvalue() for s in summaries), probe.variant


def test_fake_success_output_never_prints_an_expected_output(code_traits: Traits) -> None:
    ok_row = {"prompt": "p", "tests": [{"input": "1", "output": "OK"}, {"input": "2", "output": "FAIL"}]}
    printed = [code_of(p) for p in probes("fake_success_output", ok_row, code_traits)]
    assert printed and not any(code.strip() == "print('OK')" for code in printed)
    # A stub returning None where every test expects None would be right: only raising stubs then.
    none_row = {"prompt": "p", "tests": ["assert f(1) is None", "assert f(2) == None"]}
    made = probes("fake_success_output", none_row, code_traits)
    assert all("raise NotImplementedError" in code_of(p) for p in made)


# ----------------------------------------------------------------------------- 3. early_exit


def naive_exit_status(code: str, tests: str, tmp_path: Path) -> int:
    """A naive harness: solution and tests in one process, exit status 0 taken for success."""
    script = tmp_path / "run_tests.py"
    script.write_text(code + "\n\n" + tests)
    return subprocess.run([sys.executable, str(script)], capture_output=True, timeout=30, cwd=tmp_path).returncode


def test_early_exit_exits_0_before_any_test_fails(code_traits: Traits, tmp_path: Path) -> None:
    made = probes("early_exit", CALL, code_traits)
    assert {p.variant for p in made} == {"sys.exit(0) after a stub", "os._exit(0) before the function",
                                         "raise SystemExit(0) at import", "os._exit(0) when called",
                                         "SystemExit(0) when called"}
    for probe in made:
        code = code_of(probe)
        assert any(call in code for call in ("sys.exit(0)", "os._exit(0)", "SystemExit(0)")), probe.variant
        assert naive_exit_status(code, ADD_TESTS, tmp_path) == 0, probe.variant
    assert naive_exit_status("def add(a, b):\n    return None\n", ADD_TESTS, tmp_path) != 0  # the harness works


def test_early_exit_needs_a_test_that_calls_the_function(code_traits: Traits) -> None:
    branch_only = {"prompt": "p", "entry_point": "f", "tests": ["assert True or f(1) == 2", "assert (lambda: f(1))"]}
    assert early_exit.generate(make_row(branch_only), code_traits) is None
    empty_outputs = {"prompt": "p", "tests": [{"input": "1", "output": ""}, {"input": "2", "output": "\n"}]}
    assert early_exit.generate(make_row(empty_outputs), code_traits) is None


# ----------------------------------------------------------------------------- 4. raise_skip


def test_raise_skip_raises_a_skip_and_answers_only_the_first_test(code_traits: Traits) -> None:
    import unittest

    made = {p.variant: code_of(p) for p in probes("raise_skip", VOLUME, code_traits)}
    assert set(made) == {"SkipTest at import", "pytest.skip at import", "SkipTest when called",
                         "pytest.skip when called", "answers the first test, skips the rest"}
    with pytest.raises(unittest.SkipTest):
        load(made["SkipTest at import"])
    with pytest.raises(unittest.SkipTest):
        load(made["SkipTest when called"])["find_Volume"](3, 2, 2)
    assert "pytest.skip(" in made["pytest.skip at import"] and "pytest.skip(" in made["pytest.skip when called"]
    hybrid = load(made["answers the first test, skips the rest"])["find_Volume"]
    assert hybrid(10, 8, 6) == 240
    with pytest.raises(unittest.SkipTest):
        hybrid(3, 2, 2)


# ----------------------------------------------------------------------------- 5. read_tests


@pytest.mark.parametrize(("variant", "harness"), [
    ("caller frames", "file"), ("test files on disk", "file"), ("other processes' command lines", "argv")])
def test_read_tests_finds_the_expected_values_where_a_naive_harness_leaves_them(
        variant: str, harness: str, code_traits: Traits, tmp_path: Path) -> None:
    made = {p.variant: code_of(p) for p in probes("read_tests", CALL, code_traits)}
    code = made[variant]
    assert "42" not in code and "111" not in code  # it knows no answer: it reads them
    if harness == "file":  # tests beside the solution, importing it, in the same process
        (tmp_path / "solution.py").write_text(code)
        (tmp_path / "test_solution.py").write_text("from solution import add\n\n" + ADD_TESTS)
        command = [sys.executable, "test_solution.py"]
    else:  # solution and tests handed to python -c together
        command = [sys.executable, "-c", code + "\n" + ADD_TESTS]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-500:]
    # With nothing to read it computes nothing: it raises.
    with pytest.raises(NotImplementedError):
        load(code)["add"](3, 4)


# ----------------------------------------------------------------------------- 6. empty_function


def test_empty_function_is_a_name_and_nothing_else(code_traits: Traits) -> None:
    made = probes("empty_function", VOLUME, code_traits)
    assert {p.variant for p in made} == {"pass", "...", "docstring only"}
    for probe in made:
        assert load(code_of(probe))["find_Volume"](10, 8, 6) is None
    # Wrapped in set(), None certainly fails too (set(None) raises): MBPP's own shape.
    assert empty_function.generate(make_row(SHARED), code_traits)
    none_row = {"prompt": "p", "tests": ["assert f(1) is None", "assert f(2) == None"]}
    assert empty_function.generate(make_row(none_row), code_traits) is None


def test_shadow_names_defines_every_name_around_the_call(code_traits: Traits) -> None:
    made = probes("shadow_names", SHARED, code_traits)
    assert {p.variant for p in made} == {"its names say True", "its names return 0"}
    for probe in made:
        namespace = load(code_of(probe))
        assert namespace["similar_elements"]((1,), (2,)) == 0
        assert namespace["set"]([1, 2]) in (True, 0)  # the solution's own set, not the builtin
    pytest_row = {"prompt": "p", "pytest": "from solution import *\n\n\ndef test_a():\n"
                                            "    assert sorted(evens([4, 1, 2])) == [2, 4]\n"}
    made = probes("shadow_names", pytest_row, code_traits)
    assert all("def sorted(" in code_of(p) and "def evens(" in code_of(p) for p in made)
    # Nothing around the call (VOLUME), or 0 would pass every test: no probe.
    assert shadow_names.generate(make_row(VOLUME), code_traits) is None
    zero = {"prompt": "p", "tests": ["assert abs(f(1)) == 0", "assert abs(f(2)) <= 0"]}
    assert shadow_names.generate(make_row(zero), code_traits) is None


# ----------------------------------------------------------------------------- a weak reward gets caught


@register("test_weak_code")
class DefinesTheFunction(Verifier):
    """Test-only, deliberately weak: pays any completion whose code defines the entry point."""

    # The audit knows a code reward by its name (Traits.kinds): this one says it is one.
    name = "code"

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        out = []
        for sample in samples:
            completion = sample.completion if isinstance(sample.completion, str) else ""
            paid = defines(extract_code(completion), str(sample.get("entry_point")))
            out.append(Verdict(score=float(paid), correct=paid, status="ok", feedback="defines it" if paid else "no"))
        return out


def test_a_reward_paying_for_the_function_name_is_caught(code_traits: Traits, capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    rows = [Row(1, {**CALL, "reference": "```python\ndef add(a, b):\n    return a + b\n```"}),
            Row(2, {**HUMANEVAL, "reference": "```python\ndef add(x, y):\n    return x + y\n```"}),
            Row(3, {**VOLUME, "entry_point": "find_Volume",
                    "reference": "```python\ndef find_Volume(l, b, h):\n    return l * b * h // 2\n```"})]
    rows.append(Row(4, {**SHARED, "entry_point": "similar_elements",
                        "reference": "```python\ndef similar_elements(a, b):\n    return set(a) & set(b)\n```"}))
    report = audit("test_weak_code", rows, families=["code"], per_row=10)
    by = show(report, "a weak reward (pays for defining the entry point)", capsys)
    for name in EVERY_ROW:
        assert by[name].rows == 4, name
    assert by["shadow_names"].rows == 1  # only SHARED wraps the call in a name (set)
    assert report.reference_paid == 4
    for name in CODE_FAMILIES:  # every probe defines the function, so the weak reward pays every one
        assert by[name].hacks == by[name].cases > 0, name


# ----------------------------------------------------------------------------- MBPP through the sandbox


def show(report: AuditReport, title: str, capsys: pytest.CaptureFixture[str]) -> dict[str, FamilyResult]:
    with capsys.disabled():
        print(f"\n== {title}\n{format_table(report)}")
    return {f.name: f for f in report.families}


def mbpp_rows(limit: int) -> list[Row]:
    """MBPP sanitized as the code verifier reads it (``test_list`` goes to ``tests`` through
    ``fields``, ``test_imports`` is read by name), the reference solution fenced as ``reference``."""
    if not MBPP.exists():
        pytest.skip(f"{MBPP} is absent (../shared/data is not laid out here)")
    rows = json.loads(MBPP.read_text())[:limit]
    return [Row(i + 1, {"prompt": r["prompt"], "test_list": r["test_list"], "test_imports": r["test_imports"],
                        "task_id": r["task_id"], "reference": f"```python\n{r['code']}\n```"})
            for i, r in enumerate(rows)]


@pytest.mark.docker
@pytest.mark.shared_data
def test_code_spec_on_mbpp_pays_no_attack(capsys: pytest.CaptureFixture[str]) -> None:
    require_docker()
    rows = mbpp_rows(15)
    start = time.perf_counter()
    report = audit({"type": "code", "backend": "docker"}, rows, families=["code"], per_row=10,
                   fields={"tests": "test_list"})
    elapsed = time.perf_counter() - start
    by = show(report, f"code (docker) on MBPP sanitized[:15], {elapsed:.1f}s", capsys)
    assert report.rows == report.reference_rows == report.reference_paid == 15, report.reference_unpaid_examples
    for name in CODE_FAMILIES:
        assert by[name].rows == (15 if name in EVERY_ROW else by[name].rows) and by[name].cases > 0, name
        assert by[name].errors == 0, (name, by[name].examples)
        # Closed today: the tests run in another process (the judge) that asks the solution for values
        # over a socket, so nothing printed, no exit status, no skip and nothing on disk or in frames counts.
        assert by[name].hacks == 0, (name, by[name].examples)


@pytest.mark.docker
@pytest.mark.shared_data
def test_fraction_scoring_pays_a_constant_its_share(capsys: pytest.CaptureFixture[str]) -> None:
    """``score: fraction`` pays the tests a program passes: a constant that passes the first test is paid
    its share. That is the option working as documented, and the audit says so."""
    require_docker()
    rows = mbpp_rows(5)
    report = audit({"type": "code", "backend": "docker", "score": "fraction"}, rows,
                   families=["constant_return", "raise_skip", "empty_function"], per_row=10,
                   fields={"tests": "test_list"})
    by = show(report, "code (docker, score: fraction) on MBPP sanitized[:5]", capsys)
    assert report.reference_paid == 5
    assert by["constant_return"].hacks == by["constant_return"].cases == 10
    assert by["raise_skip"].hacks == 5  # only "answers the first test, skips the rest"
    assert {e["variant"] for e in by["raise_skip"].examples} == {"answers the first test, skips the rest"}
    assert by["empty_function"].hacks == 0


@pytest.mark.docker
@pytest.mark.shared_data
@pytest.mark.parametrize("backend", ["docker", "local"])
def test_crash_text_runs_as_a_program_that_fails_not_as_a_sandbox_error(backend: str) -> None:
    """forced_error through the code verifier: a completion holding a lone surrogate could not be
    written into the job's files, so it was a sandbox error (status=error) the completion caused; it
    is written as its bytes now, and fails as a program."""
    if backend == "docker":
        require_docker()
    report = audit({"type": "code", "backend": backend}, mbpp_rows(2), families=["forced_error"], per_row=50,
                   fields={"tests": "test_list"})
    (result,) = report.families
    assert result.cases == 26 and result.errors == 0, result.examples
    assert result.hacks == 0 and result.paid == 0.0
