"""Code-verifier cases run as one batch per sandbox backend, each hostile case followed by an honest job.

A :class:`Case` is a completion, the row's fields and what it must earn: an attack or a wrong answer
scores 0 with ``status="ok"`` (never an error a completion could force), an honest one scores 1. An
attack names an honest completion for the same row (``honest``), or another honest row (``follow``),
that runs right after it in the same batch and must still score 1: what one job did never reaches the
next. ``statuses`` optionally pins the per-test statuses (``unsupported_test`` with its reason).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Any

import pytest
from conftest import require_docker

from rewardsmith.verifiers import Sample, Verdict, build

BACKENDS = [pytest.param("local", id="local"), pytest.param("docker", id="docker", marks=pytest.mark.docker)]


def code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@dataclass(frozen=True)
class Case:
    id: str
    completion: str
    fields: dict[str, Any]
    expect: float  # 1.0: honest, must pass; 0.0: an attack or a wrong answer, must fail
    honest: str = ""  # an honest completion for the same fields, run right after an attack
    follow: tuple[str, dict[str, Any]] | None = None  # or an honest (completion, fields) of its own
    statuses: tuple[str, ...] = ()  # the per-test statuses the verdict must show, when pinned
    reason: str = ""  # a phrase the first failing test's reason must hold, when pinned
    prompt: str = ""

    def sample(self) -> Sample:
        return Sample(prompt=self.prompt, completion=code(self.completion), fields=self.fields)

    def follow_up(self) -> Sample | None:
        # The comment makes each follow-up a program of its own: a batch runs repeated completions once.
        if self.follow is not None:
            completion, fields = self.follow
            return Sample(prompt="", completion=f"{code(completion)}\n# after {self.id}\n", fields=fields)
        if self.honest:
            return Sample(prompt=self.prompt, completion=f"{code(self.honest)}\n# after {self.id}\n",
                          fields=self.fields)
        return None


@dataclass
class Outcome:
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    follow_ups: dict[str, Verdict] = field(default_factory=dict)


def run_cases(backend: str, cases: list[Case], spec: dict[str, Any]) -> Outcome:
    """Every case (and its follow-up right after it) in one ``verify_batch`` on ``backend``."""
    if backend == "docker":
        require_docker()
    ids = [case.id for case in cases]
    assert len(set(ids)) == len(ids), "case ids must be unique"
    samples, where = [], []
    for case in cases:
        samples.append(case.sample())
        where.append((case.id, False))
        follow = case.follow_up()
        if follow is not None:
            samples.append(follow)
            where.append((case.id, True))
    outcome = Outcome()
    for (cid, is_follow), verdict in zip(where, build({**spec, "backend": backend}).verify_batch(samples),
                                         strict=True):
        (outcome.follow_ups if is_follow else outcome.verdicts)[cid] = verdict
    return outcome


def module_tests(cases: list[Case], spec: dict[str, Any]) -> tuple[Any, Any]:
    """A module's ``outcome`` fixture (its cases, one batch per backend: an indirect parameter) and its
    ``test_case`` (one item per case and backend). Assign both by those names in the module."""
    by_id = {case.id: case for case in cases}

    @pytest.fixture(scope="module")
    def outcome(request) -> Outcome:
        return run_cases(request.param, cases, spec)

    @pytest.mark.parametrize("outcome", BACKENDS, indirect=True)
    @pytest.mark.parametrize("case_id", list(by_id))
    def test_case(outcome: Outcome, case_id: str) -> None:
        check_case(outcome, by_id[case_id])

    return outcome, test_case


def describe(verdict: Verdict) -> str:
    tests = [(t.get("status"), t.get("reason", "")[:120]) for t in (verdict.details or {}).get("tests", [])]
    return f"status={verdict.status} score={verdict.score} tests={tests} feedback={verdict.feedback[:300]!r}"


def check_case(outcome: Outcome, case: Case) -> None:
    """The case earned what it must, and its follow-up (if any) still scored 1."""
    verdict = outcome.verdicts[case.id]
    assert (verdict.status, verdict.score) == ("ok", case.expect), f"{case.id}: {describe(verdict)}"
    tests = (verdict.details or {}).get("tests", [])
    if case.statuses:
        assert tuple(t["status"] for t in tests) == case.statuses, f"{case.id}: {describe(verdict)}"
    if case.reason:
        failing = next(t for t in tests if t["status"] != "passed")
        assert case.reason in failing["reason"], f"{case.id}: {describe(verdict)}"
    if case.id in outcome.follow_ups:
        after = outcome.follow_ups[case.id]
        assert (after.status, after.score) == ("ok", 1.0), f"the honest job after {case.id}: {describe(after)}"
