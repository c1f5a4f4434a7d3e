"""Issue 24, item 10: honest solutions that take the tests' functions, print for ``capsys``, or
are monkeypatched, pass; the solution cannot turn the tests' functions against the judge.

A function the tests hand to the solution (a key function, a predicate, a fake installed
with ``monkeypatch.setattr(solution, ...)``) stays in the judge: the solution holds a
stand-in whose call asks the judge to run it on plain data. What the solution prints reaches
the judge's stdout during a pytest test, where ``capsys`` reads it.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, build
from rewardsmith.verifiers.code import CodeVerifier


@pytest.fixture
def backend(code_backend):
    return code_backend


def verify_all(backend, samples: list[Sample], timeout_s: float = 3) -> list:
    verifier: CodeVerifier = build({"type": "code", "timeout_s": timeout_s})
    verifier._backend_override = backend  # the documented test-only hook
    return verifier.verify_batch(samples)


def scores(backend, tests, codes: list[str], **fields) -> list[float]:
    verdicts = verify_all(backend, [Sample(completion=code, fields={"tests": tests, **fields}) for code in codes])
    assert all(v.status == "ok" for v in verdicts), [v.feedback for v in verdicts]
    return [v.score for v in verdicts]


SORT_BY = "def sort_by(xs, key):\n    return sorted(xs, key=key)\n"
SORT_WRONG = "def sort_by(xs, key):\n    return sorted(xs)\n"
KEY_ASSERTS = ["assert sort_by([3, 1, 2], key=lambda v: -v) == [3, 2, 1]",
               "assert sort_by(['bb', 'a', 'ccc'], key=len) == ['a', 'bb', 'ccc']",
               "assert sort_by([(1, 'b'), (2, 'a')], key=lambda p: p[1]) == [(2, 'a'), (1, 'b')]"]


@pytest.mark.slow
def test_the_tests_functions_can_be_called_by_the_solution(backend):
    check = "def check(candidate):\n" + "".join(f"    {a.replace('sort_by(', 'candidate(')}\n" for a in KEY_ASSERTS)
    pytest_file = "from solution import *\n\n\ndef test_key():\n" + "".join(f"    {a}\n" for a in KEY_ASSERTS)
    for tests, extra in ((KEY_ASSERTS, {}), (check, {"entry_point": "sort_by"}), ({"pytest": pytest_file}, {})):
        assert scores(backend, tests, [SORT_BY, SORT_WRONG], **extra) == [1.0, 0.0]


@pytest.mark.slow
def test_what_the_tests_function_raises_reaches_the_solution(backend):
    tests = {"pytest": "import pytest\nfrom solution import *\n\n\ndef test_raise():\n"
                       "    with pytest.raises(ZeroDivisionError):\n        apply(lambda v: v / 0, 1)\n"
                       "    assert apply(lambda v: v + 1, 1) == 2\n"}
    swallow = "def apply(f, x):\n    try:\n        return f(x)\n    except ZeroDivisionError:\n        return 0\n"
    assert scores(backend, tests, ["def apply(f, x):\n    return f(x)\n", swallow]) == [1.0, 0.0]


@pytest.mark.slow
def test_a_solution_cannot_stall_or_break_the_judge_through_a_callback(backend):
    tests = ["assert apply(lambda v: v + 1, 1) == 2", "assert apply(lambda v: v * 2, 4) == 8"]
    attacks = [
        "def apply(f, x):\n    while True:\n        f(x)\n",  # calls us forever: the test's time runs out
        "def apply(f, x):\n    return f(f)\n",  # hands our own function back to it
        "def apply(f, x):\n    return f(x, 1, 2, y=3)\n",  # a wrong call: a TypeError raised here
        "def apply(f, x):\n    return f(10 ** 5000)\n",  # a huge value for us to compute on
        "def apply(f, x):\n    return f\n",  # our function returned as the answer
        # kept for later tests
        "_kept = []\n\n\ndef apply(f, x):\n    _kept.append(f)\n    return sum(g(x) for g in _kept)\n",
    ]
    verdicts = verify_all(backend, [Sample(completion=code, fields={"tests": tests}) for code in attacks]
                          + [Sample(completion="def apply(f, x):\n    return f(x)\n", fields={"tests": tests})],
                          timeout_s=1)
    *bad, good = verdicts
    for code, verdict in zip(attacks, bad, strict=True):
        assert verdict.status == "ok" and verdict.score == 0.0, (code, verdict.feedback)
    assert good.status == "ok" and good.score == 1.0, good.feedback


@pytest.mark.slow
def test_the_judges_files_names_and_interpreter_are_never_handed_over(backend):
    # A test that hands the solution open, eval, getattr or os.listdir would let it read the tests.
    tests = {"pytest": "import os\nfrom solution import *\n\n\n"
                       "def test_open():\n    assert use(open, 'test_solution.py')\n\n\n"
                       "def test_eval():\n    assert use(eval, '1 + 1')\n\n\n"
                       "def test_listdir():\n    assert use(os.listdir, '.')\n\n\n"
                       "def test_getattr():\n    assert use(getattr, os, 'environ')\n\n\n"
                       "def test_len():\n    assert use(len, 'ab') == 2\n"}
    verdicts = verify_all(backend, [Sample(completion="def use(f, *args):\n    return f(*args)\n",
                                           fields={"tests": tests})])
    statuses = {t["name"].split("::")[-1]: t["status"] for t in verdicts[0].details["tests"]}
    assert statuses == {"test_open": "unsupported_value", "test_eval": "unsupported_value",
                        "test_listdir": "unsupported_value", "test_getattr": "unsupported_value",
                        "test_len": "passed"}, verdicts[0].feedback


GREET = "def greet(name):\n    print(f'Hello, {name}!')\n"
CAPSYS = {"pytest": "from solution import *\n\n\ndef test_out(capsys):\n    greet('Bo')\n"
                    "    assert capsys.readouterr().out == 'Hello, Bo!\\n'\n\n\n"
                    "def test_err(capsys):\n    warn('x')\n    captured = capsys.readouterr()\n"
                    "    assert captured.err == 'warning: x\\n' and captured.out == ''\n"}


@pytest.mark.slow
def test_capsys_reads_what_the_solution_prints(backend):
    honest = GREET + "\n\nimport sys\n\n\ndef warn(m):\n    print(f'warning: {m}', file=sys.stderr)\n"
    wrong = honest.replace("Hello,", "Hi,")
    silent = "def greet(name):\n    return f'Hello, {name}!'\n\n\ndef warn(m):\n    return m\n"
    to_stdout = honest.replace(", file=sys.stderr", "")
    # What it prints while it loads is not the tests' to read, and never reaches the judge's records.
    loud = "print('RESULT ' + 'x' * 1_040_000)\n" + honest
    assert scores(backend, CAPSYS, [honest, wrong, silent, to_stdout, loud]) == [1.0, 0.0, 0.0, 0.0, 1.0]


MONKEY = {"pytest": "import solution\nfrom solution import *\n\n\n"
                    "def test_patched(monkeypatch):\n    monkeypatch.setattr(solution, 'fetch', lambda: 41)\n"
                    "    assert compute() == 42\n\n\n"
                    "def test_value_patched(monkeypatch):\n    monkeypatch.setattr(solution, 'LIMIT', 2)\n"
                    "    assert clip([1, 5]) == [1, 2]\n\n\n"
                    "def test_restored():\n    assert compute() == 11 and clip([1, 5]) == [1, 3]\n"}
HONEST_MONKEY = ("LIMIT = 3\n\n\ndef fetch():\n    return 10\n\n\ndef compute():\n    return fetch() + 1\n\n\n"
                 "def clip(xs):\n    return [min(x, LIMIT) for x in xs]\n")


@pytest.mark.slow
def test_monkeypatch_setattr_on_the_solution(backend):
    hard_coded = HONEST_MONKEY.replace("return fetch() + 1", "return 42")
    ignores_limit = HONEST_MONKEY.replace("min(x, LIMIT)", "min(x, 3)")
    assert scores(backend, MONKEY, [HONEST_MONKEY, hard_coded, ignores_limit]) == [1.0, 0.0, 0.0]


TMP_PATH = {"pytest": "from solution import *\n\n\n"
                      "def test_reads(tmp_path):\n    source = tmp_path / 'in.txt'\n"
                      "    source.write_text('a\\nb\\nc\\n')\n"
                      "    assert count_lines(str(source)) == 3\n\n\n"
                      "def test_writes(tmp_path):\n    target = tmp_path / 'out.txt'\n    save(str(target), 'hi')\n"
                      "    assert target.read_text() == 'hi'\n\n\n"
                      "def test_makes_a_folder(tmp_path):\n    save(str(tmp_path / 'sub' / 'x.txt'), 'y')\n"
                      "    assert (tmp_path / 'sub' / 'x.txt').read_text() == 'y'\n"}
FILES = ("import os\n\n\ndef count_lines(path):\n    with open(path) as handle:\n"
         "        return len(handle.readlines())\n"
         "\n\ndef save(path, text):\n    os.makedirs(os.path.dirname(path), exist_ok=True)\n"
         "    with open(path, 'w') as handle:\n        handle.write(text)\n")


@pytest.mark.slow
def test_tmp_path_is_the_solutions_to_read_and_write(backend):
    wrong = FILES.replace("handle.write(text)", "handle.write(text.upper())")
    # It cannot reach the tests' files through tmp_path's parents, nor list what is above.
    above = "os.path.dirname(os.path.dirname(os.path.dirname(path)))"
    nosy = FILES.replace("        return len(handle.readlines())", f"        pass\n    return len(os.listdir({above}))")
    assert scores(backend, TMP_PATH, [FILES, wrong, nosy]) == [1.0, 0.0, 0.0]
    # Jobs after one that filled its tmp_path still pass.
    assert scores(backend, TMP_PATH, [FILES]) == [1.0]
