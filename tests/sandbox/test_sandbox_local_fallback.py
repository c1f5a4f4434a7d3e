"""The local backend without bubblewrap (issue item 9): refused unless the user opts in knowingly.

bwrap is never uninstalled here: ``rewardsmith.sandbox.local.find_bwrap`` is replaced to simulate
a host without it (None) or with one that cannot create namespaces (``/bin/false``). Refused, every
job is ``status="error"`` with a message that says what to do, which the code verifier turns into
an error verdict (never a 0). Opted in, honest solutions pass and wrong ones fail. With bwrap, a
solution that plants pytest hooks (``conftest.py``, ``pytest.ini``) everywhere it can reach does not
make a later wrong answer pass.
"""

from __future__ import annotations

import os
import textwrap

import pytest

import rewardsmith.verifiers.code  # noqa: F401 - registers "code"
from rewardsmith.sandbox import local
from rewardsmith.sandbox.job import Job
from rewardsmith.sandbox.local import UNSAFE_ENV, LocalBackend
from rewardsmith.verifiers import Sample, build

pytestmark = pytest.mark.slow

ADD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"
FORMS = {
    "check": {"tests": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(20, 22) == 42\n",
              "entry_point": "add"},
    "call": {"tests": [{"args": [1, 2], "expected": 3}, {"args": [20, 22], "expected": 42}], "entry_point": "add"},
    "pytest": {"tests": {"pytest": "from solution import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
                                   "    assert add(20, 22) == 42\n"}},
}
WHAT_TO_DO = ("apt-get install bubblewrap", "user namespaces", "Docker", f"{UNSAFE_ENV}=1", "allow_unsafe=True")


def verifier_on(backend):
    verifier = build({"type": "code", "timeout_s": 3.0})
    verifier._backend_override = backend  # the documented test-only hook
    return verifier


def verdicts_for(backend, code: str) -> dict:
    samples = [Sample(prompt="", completion=f"```python\n{code}```", fields=fields) for fields in FORMS.values()]
    return dict(zip(FORMS, verifier_on(backend).verify_batch(samples), strict=True))


def assert_honest_passes_and_wrong_fails(backend) -> None:
    for form, verdict in verdicts_for(backend, ADD).items():
        assert (verdict.status, verdict.score) == ("ok", 1.0), (form, verdict)
    for form, verdict in verdicts_for(backend, WRONG).items():
        assert (verdict.status, verdict.score) == ("ok", 0.0), (form, verdict)


@pytest.fixture
def no_opt_in(monkeypatch):
    monkeypatch.delenv(UNSAFE_ENV, raising=False)


@pytest.fixture(params=["missing", "broken"])
def without_bwrap(request, monkeypatch, no_opt_in):
    """bwrap not installed, or installed but unable to create namespaces (here: /bin/false)."""
    monkeypatch.setattr(local, "find_bwrap", lambda: None if request.param == "missing" else "/bin/false")
    return request.param


# -- (1) refused by default ----------------------------------------------------------------------------


def test_refused_by_default_with_a_message_that_says_what_to_do(without_bwrap):
    with LocalBackend(concurrency=1) as backend:
        result = backend.run(Job(command=["python3", "-c", "print('ran')"]))
        assert result.status == "error" and result.stdout == "" and result.exit_code is None, result
        assert backend.isolation == "refused" and backend._all == []  # no runner kept
        for needed in WHAT_TO_DO:
            assert needed in result.error, result.error
        why = "bwrap is not installed" if without_bwrap == "missing" else "cannot create its namespaces"
        assert why in result.error
        for form, verdict in verdicts_for(backend, ADD).items():  # an error verdict, never a 0 score
            assert verdict.status == "error" and verdict.correct is None, (form, verdict)
            assert "refuses to run jobs without bubblewrap" in verdict.feedback and UNSAFE_ENV in verdict.feedback


def test_turning_bwrap_off_is_refused_too(no_opt_in):
    with LocalBackend(concurrency=1, use_bwrap=False) as backend:
        result = backend.run(Job(command=["python3", "-c", "print('ran')"]))
        assert result.status == "error" and "use_bwrap=False" in result.error, result


def test_allow_unsafe_false_wins_over_the_environment(monkeypatch):
    monkeypatch.setattr(local, "find_bwrap", lambda: None)
    monkeypatch.setenv(UNSAFE_ENV, "1")
    with LocalBackend(concurrency=1, allow_unsafe=False) as backend:
        assert backend.run(Job(command=["true"])).status == "error"


def test_doctor_reports_the_refusal(without_bwrap):
    from rewardsmith.sandbox.doctor import local_checks

    checks = list(local_checks())
    assert [c.name for c in checks] == ["local isolation"] and not checks[0].ok
    assert "refuses every job" in checks[0].detail and "apt-get install bubblewrap" in checks[0].fix


def test_with_bwrap_nothing_is_refused(no_opt_in):
    with LocalBackend(concurrency=1) as backend:
        if backend.isolation != "bwrap":
            pytest.skip("bubblewrap is not usable here")
        assert backend.refusal is None
        assert_honest_passes_and_wrong_fails(backend)


# -- (2) opted in ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_opted_in_honest_passes_and_wrong_fails(how, without_bwrap, monkeypatch):
    if how == "environment":
        monkeypatch.setenv(UNSAFE_ENV, "1")
    with LocalBackend(concurrency=1, allow_unsafe=True if how == "argument" else None) as backend:
        assert backend.isolation == "rlimits" and backend.refusal is None
        result = backend.run(Job(command=["python3", "-c", "print('ran')"]))
        assert (result.status, result.stdout, result.details["isolation"]) == ("ok", "ran\n", "rlimits"), result
        assert_honest_passes_and_wrong_fails(backend)


def test_opted_in_doctor_says_it_is_weaker(without_bwrap, monkeypatch):
    from rewardsmith.sandbox.doctor import local_checks

    monkeypatch.setenv(UNSAFE_ENV, "1")
    checks = list(local_checks())
    assert checks[0].name == "local isolation" and not checks[0].ok and "rlimits only" in checks[0].detail
    assert any(c.name.endswith("runs a program") and c.ok for c in checks)


# -- (3) planted pytest hooks do not reach a later job ------------------------------------------------------

HOOKS = textwrap.dedent('''
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        report.outcome = "passed"
        report.longrepr = None


    def pytest_collection_modifyitems(session, config, items):
        for item in items:
            item.obj = lambda *args, **kwargs: None
''')

PLANT = textwrap.dedent('''
    import os, tempfile
    HOOKS = {hooks!r}
    INI = "[pytest]\\naddopts = -p no:randomly\\n"
    places = {{os.getcwd(), os.path.dirname(os.getcwd()), os.path.dirname(os.path.dirname(os.getcwd())),
              os.environ.get("TMPDIR", ""), tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm",
              os.path.expanduser("~")}}
    planted = []
    for place in sorted(p for p in places if p):
        for name, text in (("conftest.py", HOOKS), ("pytest.ini", INI)):
            try:
                with open(os.path.join(place, name), "w") as handle:
                    handle.write(text)
                planted.append(os.path.join(place, name))
            except OSError:
                pass
    PLANTED = planted
''')


def conftest_attack_does_not_carry_over(backend) -> None:
    attack = PLANT.format(hooks=HOOKS) + WRONG
    fields = FORMS["pytest"]
    verifier = verifier_on(backend)
    first = verifier.verify(Sample(prompt="", completion=f"```python\n{attack}```", fields=fields))
    assert (first.status, first.score) == ("ok", 0.0), first  # its own hooks do not reach its judge
    for _ in range(2):
        later = verifier.verify(Sample(prompt="", completion=f"```python\n{WRONG}```", fields=fields))
        assert (later.status, later.score) == ("ok", 0.0), later
    assert_honest_passes_and_wrong_fails(backend)
    for place in ("/tmp", "/var/tmp", "/dev/shm"):
        for name in ("conftest.py", "pytest.ini"):
            assert not os.path.exists(os.path.join(place, name)), f"{place}/{name} was left on the host"


def test_with_bwrap_planted_pytest_hooks_do_not_reach_a_later_job(no_opt_in):
    with LocalBackend(concurrency=1) as backend:
        if backend.isolation != "bwrap":
            pytest.skip("bubblewrap is not usable here")
        conftest_attack_does_not_carry_over(backend)


def test_opted_in_as_root_planted_pytest_hooks_are_swept(monkeypatch):
    """Without bwrap, as root, what the job's uids leave in /tmp and the like is removed after it."""
    if os.geteuid() != 0:
        pytest.skip("without root, the opted-in fallback's jobs run as our uid: nothing is guaranteed (documented)")
    monkeypatch.setattr(local, "find_bwrap", lambda: None)
    with LocalBackend(concurrency=1, allow_unsafe=True) as backend:
        conftest_attack_does_not_carry_over(backend)
