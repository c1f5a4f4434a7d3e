"""The ``code`` verifier: run the completion's program against the sample's tests in a sandbox.

Fields read (names configurable): ``tests`` (``tests_field``), ``entry_point``, ``setup`` /
``test_imports`` / ``test_setup_code`` (trusted code run before the tests), ``pytest`` (a
pytest file, when there is no ``tests``), and the prompt (prepended for HumanEval-style
completions that continue the prompt's function body).

Test forms (see :func:`~rewardsmith.verifiers.code.tests.normalize_tests`): assert scripts
(HumanEval ``check(candidate)``, MBPP ``test_list``), function-call cases, stdin/stdout
cases (one fresh process per case, compared on the host with a named checker or a custom
checker program), and pytest files. Assert scripts, function calls and pytest files run as
ONE judged sandbox job per sample: the tests run in a judge process of another user and
call the solution, loaded in the candidate's process, over a socket in plain data (see
:mod:`~rewardsmith.verifiers.code.harness`); function-call results are compared on the
host, strictly (:func:`~rewardsmith.verifiers.code.tests.values_equal`). Everything the host
does with a job's output (records, returned values, stdout) runs in a killable worker, bounded
per row in time and memory (:mod:`~rewardsmith.verifiers.code.host`). The batch path sends
every job of every sample to the backend's ``run_batch`` at once, and their host work to one
map over the worker pool; only compiled languages and custom checkers need more rounds.

Statuses per test: ``passed``, ``wrong_answer``, ``runtime_error``, ``timeout``,
``memory_limit``, ``output_limit``, ``compile_error``, ``unsupported_value`` (the tests
compared a value that is not plain data), ``unsupported_test`` (the test uses the solution in
a way the judge cannot support safely; the reason names the construct), ``sandbox_error``.
Anything the candidate can cause is one of the first nine; a sandbox error in any test makes the verdict
``status="error"``: an infrastructure failure is never scored 0.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import hashlib
import json
import pickle
import re
import secrets
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal

from rewardsmith.sandbox.job import ExecResult, Job, Peer
from rewardsmith.sandbox.limits import Limits
from rewardsmith.verifiers.code import host
from rewardsmith.verifiers.code import names as code_names
from rewardsmith.verifiers.code.harness import candidate_program, judge_program, prepare_pytest, prepare_script
from rewardsmith.verifiers.code.host import HostWork
from rewardsmith.verifiers.code.sandboxed.wire import Classes, WireError, decode, encode
from rewardsmith.verifiers.code.tests import (
    CHECKERS,
    TestsError,
    TestSuite,
    assemble_code,
    check_output,
    extract_code,
    from_dataset,
    normalize_tests,
    values_equal,
    with_prelude,
)
from rewardsmith.verifiers.core import (
    Sample,
    Verdict,
    Verifier,
    error,
    invalid_input,
    read_completion,
    safe_repr,
    short,
)
from rewardsmith.verifiers.options import Pattern, Range, declare, option
from rewardsmith.verifiers.pool import Outcome
from rewardsmith.verifiers.registry import register

SCORES = ("all", "fraction", "first_k")
LANGUAGES = ("python", "cpp")
TEST_STATUSES = ("passed", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit",
                 "compile_error", "unsupported_value", "unsupported_test", "sandbox_error")
_EXCERPT = 400
_EXEC_TO_TEST = {"timeout": "timeout", "memory": "memory_limit", "output_limit": "output_limit",
                 "error": "sandbox_error"}
_MARK = "RESULT"
NO_CHECK = ("no check ran: no assert, unittest assertion or TestCase test of the tests ran (a function the tests "
            "define but never call is not run, pytest-style test_* functions included: give those as a pytest file)")
# Python's report of a file that does not compile: a frame line for solution.py without
# ", in <function>", then the error (a SyntaxError raised at run time by eval has both). Read
# by linear searches: stderr is the candidate's, and a backtracking pattern over a megabyte of
# repeated tracebacks would hold the host for days.
_COMPILE_ERROR_LINE = re.compile(r"^(?:SyntaxError|IndentationError|TabError):", re.MULTILINE)
_BARE_FRAME = re.compile(r'File "[^"\n]*solution\.py", line \d+\n')
_FUNCTION_FRAME = re.compile(r'File "[^"\n]*solution\.py", line \d+, in ')
_WORKDIR_PATH = re.compile(r'File "[^"]*/(solution\.py|solution\.cpp|checker\.py)"')

# A sample's check is a generator: it yields the jobs it needs next and receives their results, or
# the host work it needs (parsing and comparing their output) and receives its Outcome; it returns its
# Verdict. The driver batches the jobs of every sample into one run_batch per round, and their host
# work into one bounded map over the host's worker pool.
Check = Generator[list[Job] | HostWork, list[ExecResult] | Outcome, Verdict]


CheckerSource = Annotated[str, Pattern(r"[\s\S]*\n[\s\S]*", "the source of a checker program (several lines)")]


@register("code")
@declare
class CodeVerifier(Verifier):
    """Run the completion's code against the sample's tests in the sandbox.

    Options: ``language`` (``python`` or ``cpp``; C++ supports stdin/stdout cases),
    ``backend`` (``auto``, ``docker``, ``local``), ``timeout_s`` per test, ``memory_mb``,
    ``tests_field``, ``entry_point_field``, ``score`` (``all``: 1 only when every test passes;
    ``fraction``: passed/total; ``first_k``: 1 when the first ``k`` tests pass), ``checker``
    for stdin/stdout (``exact``, ``whitespace`` (default), ``float``, ``tokens_ci``, or the
    Python source of a checker program run as ``checker.py INPUT EXPECTED ACTUAL``, exit 0 =
    accept), ``rel_tol``/``abs_tol`` (float comparisons: relative to the expected value; an absolute
    floor only where one is set, around an expected 0, or, on stdout, for the expected number's own
    rounding, capped — so ``return 0.0`` never passes an expected ``1e-12``), ``prepend_prompt`` (``auto``,
    ``true``, ``false``), ``output_bytes`` (per stream per test), ``max_job_s`` (cap on one
    sandbox job: the sum of the per-test limits of a sample), ``compile_timeout_s``,
    ``python`` (interpreter inside the sandbox), ``host_timeout_s``/``host_memory_mb`` (the bound
    on the host's work on one row's output, see :mod:`~rewardsmith.verifiers.code.host`).

    Holds only configuration (the backend by name), so it pickles. Tests may hand in a
    backend object through the private attribute ``_backend_override`` (not pickled).
    """

    name = "code"

    language: Literal[LANGUAGES] = option("python", "the solution's language (cpp: stdin/stdout tests only)")
    backend: Literal["auto", "docker", "local"] = option("auto", "the sandbox: docker when an engine answers, else "
                                                                 "local (weaker isolation)")
    timeout_s: Annotated[float, Range(gt=0)] = option(5.0, "time limit per test, in seconds")
    memory_mb: Annotated[int, Range(ge=32)] = option(1024, "memory limit per test, in MiB")
    tests_field: str = option("tests", "the field holding the tests")
    entry_point_field: str = option("entry_point", "the field naming the function under test, or a list of the "
                                                   "names the tests may take from the solution")
    prelude_field: str = option("prelude", "the field holding trusted code the tests rely on (helpers, imports: "
                                           "HumanEval's prompt under a chat prompt); run before the solution")
    reference_field: str = option("code", "a field with a reference solution (MBPP's code): when the row names no "
                                          "entry point, the names it defines that the tests use are the entry points")
    score: Literal[SCORES] = option("all", "all: 1 only when every test passes; fraction: passed/total; first_k: 1 "
                                           "when the first k pass")
    k: Annotated[int, Range(ge=1)] = option(1, "the k of score: first_k")
    checker: Literal[CHECKERS] | CheckerSource | None = option(
        None, "how stdout is compared (default whitespace), or the Python source of a checker program")
    rel_tol: Annotated[float, Range(ge=0)] = option(1e-6, "relative tolerance of float comparisons")
    abs_tol: Annotated[float, Range(ge=0)] | None = option(
        None, "absolute tolerance of float comparisons: unset, only around an expected 0 (1e-9); set, "
              "max(relative, absolute) everywhere (a problem's 'absolute or relative error')")
    prepend_prompt: bool | Literal["auto"] = option("auto", "put the prompt before the code (HumanEval-style "
                                                            "completions of a function body)")
    output_bytes: Annotated[int, Range(ge=1)] = option(1 << 20, "stdout/stderr kept per stream per test")
    max_job_s: Annotated[float, Range(gt=0)] = option(60.0, "cap on one sandbox job (the sum of a sample's limits)")
    compile_timeout_s: Annotated[float, Range(gt=0)] = option(30.0, "time limit for compiling (cpp)")
    python: str = option("python3", "the interpreter inside the sandbox")
    host_timeout_s: Annotated[float, Range(gt=0)] = option(
        5.0, "time limit of the host's work on one row's output (parsing the judge's records, decoding and "
             "comparing returned values, checking stdout), in a killable worker; a row over it scores 0")
    host_memory_mb: Annotated[int, Range(ge=256)] = option(
        1024, "memory limit (address space) of the worker process doing that work; a row over it scores 0")

    def __post_init__(self) -> None:
        self._backend_override: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_backend_override"] = None
        return state

    def start(self, wait: bool = False) -> None:
        """Start the host's worker pool (see :meth:`Verifier.start`)."""
        if wait:
            host.warm(self.host_memory_mb)
        else:
            host.pool(self.host_memory_mb).start()

    # -- the batch path ---------------------------------------------------------------

    def _verify_batch(self, samples: list[Sample]) -> list[Verdict]:
        start = time.perf_counter()
        out: list[Verdict | None] = [None] * len(samples)
        checks: dict[str, Check] = {}
        owners: dict[str, list[int]] = {}
        for i, sample in enumerate(samples):
            try:
                prepared = self._prepare(sample)
            except Exception as exc:  # a verifier bug must not take the batch down
                out[i] = error(f"code verifier failed: {type(exc).__name__}: {exc}")
                continue
            if isinstance(prepared, Verdict):
                out[i] = prepared
                continue
            key, check = prepared
            if key not in checks:  # GRPO groups repeat completions: run each distinct program once
                checks[key] = check
            owners.setdefault(key, []).append(i)
        verdicts = self._drive(checks)
        for key, indices in owners.items():
            verdict = verdicts[key]
            for n, i in enumerate(indices):
                out[i] = verdict if n == 0 else copy.deepcopy(verdict)
        elapsed = time.perf_counter() - start
        for verdict in out:
            if verdict is not None and not verdict.elapsed_s:
                verdict.elapsed_s = elapsed / max(1, len(samples))
        return [v if v is not None else error("code verifier produced no verdict") for v in out]

    def _backend(self) -> Any:
        if self._backend_override is not None:
            return self._backend_override
        from rewardsmith.sandbox.backend import get_backend

        return get_backend(self.backend)

    def _drive(self, checks: Mapping[str, Check]) -> dict[str, Verdict]:
        """Advance every sample's check in lock-step, one ``run_batch`` per round of jobs and one
        bounded map per round of host work."""
        verdicts: dict[str, Verdict] = {}
        waiting: dict[str, list[Job]] = {}
        hosting: dict[str, HostWork] = {}
        for key, check in checks.items():
            self._advance(key, check, None, waiting, hosting, verdicts)
        if waiting:  # the host's workers start (import, preload) while the sandbox runs the first round
            with contextlib.suppress(Exception):  # a pool that cannot start says so when it is used
                self.start()
        backend = None
        while waiting or hosting:
            if hosting:
                order_host = list(hosting.items())
                hosting = {}
                outcomes = host.run([work for _, work in order_host], self.host_timeout_s, self.host_memory_mb)
                for (key, _), outcome in zip(order_host, outcomes, strict=True):
                    self._advance(key, checks[key], outcome, waiting, hosting, verdicts)
                continue
            if backend is None:
                try:
                    backend = self._backend()
                except Exception as exc:  # e.g. backend: docker with no engine: error verdicts, not a crash
                    backend = _Unavailable(f"{type(exc).__name__}: {exc}")
            order = list(waiting.items())
            jobs = [job for _, batch in order for job in batch]
            results = _run_batch(backend, jobs)
            # A sandbox error says nothing about the program (a runner died, a container was
            # replaced): such jobs get one more try before they turn into error verdicts.
            retry = [i for i, result in enumerate(results) if result.status == "error"]
            if retry:
                for i, result in zip(retry, _run_batch(backend, [jobs[i] for i in retry]), strict=True):
                    results[i] = result
            waiting = {}
            offset = 0
            for key, batch in order:
                part = results[offset: offset + len(batch)]
                offset += len(batch)
                self._advance(key, checks[key], part, waiting, hosting, verdicts)
        return verdicts

    @staticmethod
    def _advance(key: str, check: Check, sent: list[ExecResult] | Outcome | None, waiting: dict[str, list[Job]],
                 hosting: dict[str, HostWork], verdicts: dict[str, Verdict]) -> None:
        try:
            request = next(check) if sent is None else check.send(sent)
        except StopIteration as stop:
            verdicts[key] = stop.value
            return
        except Exception as exc:
            verdicts[key] = error(f"code verifier failed: {type(exc).__name__}: {exc}")
            return
        if isinstance(request, HostWork):
            hosting[key] = request
        elif request:
            waiting[key] = request
        else:
            CodeVerifier._advance(key, check, [], waiting, hosting, verdicts)

    # -- one sample ---------------------------------------------------------------------

    def _prepare(self, sample: Sample) -> Verdict | tuple[str, Check]:
        text = read_completion(sample)
        if isinstance(text, Verdict):
            return text
        tests = sample.get(self.tests_field)
        declared = code_names.declared(sample.get(self.entry_point_field))
        entry_point = declared[0] if declared else None
        setup = sample.get("setup", sample.get("test_setup", sample.get("test_imports", sample.get("test_setup_code"))))
        try:
            suite = normalize_tests(tests, entry_point=entry_point, setup=setup, pytest_source=sample.get("pytest"),
                                    checker=self.checker)
        except TestsError as exc:
            missing = self.tests_field if tests is None and sample.get("pytest") is None else None
            return invalid_input(str(exc), missing_field=missing, tests_field=self.tests_field)
        if self.language == "cpp" and suite.form != "stdio":
            return invalid_input(f"language 'cpp' supports stdin/stdout tests only, got {suite.form} tests")
        code = extract_code(text, self.language)
        if not code.strip():
            return Verdict(score=0.0, correct=False, status="no_answer", feedback="no code found in the completion",
                           details={"tests": []})
        prelude = ""
        row_prelude = sample.get(self.prelude_field)
        if isinstance(row_prelude, str) and row_prelude.strip() and suite.form != "stdio":
            if code_names.parse(row_prelude) is None:
                return invalid_input(f"the row's {self.prelude_field} is not valid Python")
            code, prelude = with_prelude(code, row_prelude, suite.entry_point), row_prelude
        elif self.language == "python" and suite.form in ("script", "call") and isinstance(sample.prompt, str):
            code, prelude = assemble_code(code, sample.prompt, suite.entry_point, self.prepend_prompt)
        reference = sample.get(self.reference_field)
        names = code_names.entry_points(
            suite.code, (suite.setup, prelude), declared if declared else ((suite.entry_point,) if suite.entry_point
                                                                           else ()),
            reference if isinstance(reference, str) else None) if suite.form in ("script", "pytest") else ()
        # pickle, not json: a case may hold ints past Python's 4,300-digit str limit.
        key = hashlib.sha256(pickle.dumps([code, prelude, suite.form, suite.code, suite.cases, suite.entry_point,
                                           suite.setup, suite.checker, names])).hexdigest()
        if suite.form == "stdio":
            check = self._check_stdio(code, suite)
        else:
            check = self._check_harness(code, suite, prelude, names)
        return key, check

    def _limits(self, wall_s: float, output_bytes: int | None = None, memory_mb: int | None = None) -> Limits:
        return Limits(wall_s=wall_s, cpu_s=wall_s, memory_mb=memory_mb or self.memory_mb,
                      output_bytes=output_bytes or self.output_bytes)

    # -- assert scripts, function calls, pytest: one harness job ------------------------

    def _check_harness(self, code: str, suite: TestSuite, prelude: str, names: tuple[str, ...]) -> Check:
        nonce = secrets.token_hex(16)
        payload: dict[str, Any] = {"nonce": nonce, "form": suite.form, "timeout_s": self.timeout_s,
                                   "output_bytes": self.output_bytes, "entry_point": suite.entry_point,
                                   "setup": suite.setup, "prelude": prelude, "entry_points": list(names),
                                   "modules": list(code_names.standard_modules(suite.code, (suite.setup, prelude)))}
        if suite.form == "script":
            payload.update(_prepared_script(suite.code, suite.entry_point))
            count = payload.pop("budget")
            # Only a speed-up (importing unittest costs the judge ~35 ms, pytest more): the judge also
            # finds a framework the tests import some other way, and counts its checks all the same.
            payload["frameworks"] = [name for name in ("unittest", "pytest")
                                     if any(name in text for text in (suite.code, suite.setup, prelude))]
        elif suite.form == "call":
            payload["cases"] = [[encode(from_dataset(case["args"])), encode(from_dataset(case["kwargs"]))]
                                for case in suite.cases]
            payload["names"] = [call_name(suite.entry_point or "f", case) for case in suite.cases]
            count = len(suite.cases)
        else:
            payload.update(_prepared_pytest(suite.code))
            payload["tests"] = suite.code
            payload["exported"] = list(code_names.exported(names, suite.code))
            count = max(1, len(payload["static"]))
        # Every test has its own limit inside the judge; the job's wall clock is their sum
        # (plus loading the solution and starting up), capped.
        wall = min(self.timeout_s * (count + 2) + 2.0, self.max_job_s)
        judge = Peer(command=[self.python, "-I", "-c", judge_program()], stdin=json.dumps(payload),
                     env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        job = Job(command=[self.python, "-I", "-c", candidate_program()], files={"solution.py": code}, judge=judge,
                  limits=self._limits(wall, output_bytes=self.output_bytes + 4096 * (count + 4)))
        (result,) = yield [job]
        outcome = yield HostWork(judged_tests, (nonce, _for_host(result), suite, self.rel_tol, self.abs_tol))
        tests = self._host_value(outcome)
        if isinstance(tests, Verdict):
            return tests
        return self._verdict(tests, suite, result.wall_s)

    def _host_value(self, outcome: Outcome) -> Any:
        """What the host work returned, or the verdict of a row whose output hit the host's bounds."""
        failed = host.failure(outcome, self.host_timeout_s, self.host_memory_mb)
        return outcome.value if failed is None else failed

    # -- stdin/stdout: one process per case, compared here ------------------------------

    def _check_stdio(self, code: str, suite: TestSuite) -> Check:
        checker = suite.checker or self.checker or "whitespace"
        wall = 0.0
        if self.language == "cpp":
            compile_job = Job(
                command=["sh", "-c", "g++ -O2 -std=c++17 -o solution solution.cpp 1>&2 && base64 -w0 solution"],
                files={"solution.cpp": code},
                limits=self._limits(self.compile_timeout_s, output_bytes=64 << 20, memory_mb=max(self.memory_mb, 2048)))
            (compiled,) = yield [compile_job]
            wall += compiled.wall_s
            failure = compile_failure(compiled)
            if failure is not None:
                status, reason = failure
                tests = [stdio_result(i, case, status, reason, compiled) for i, case in enumerate(suite.cases)]
                return self._verdict(tests, suite, wall)
            binary = base64.b64decode(compiled.stdout)
            jobs = [Job(command=["sh", "-c", "chmod 700 solution && exec ./solution"], files={"solution": binary},
                        stdin=case["input"], limits=self._limits(self.timeout_s + 0.5)) for case in suite.cases]
        else:
            jobs = [Job(command=[self.python, "solution.py"], files={"solution.py": code}, stdin=case["input"],
                        limits=self._limits(self.timeout_s + 1.0)) for case in suite.cases]
        results = yield jobs
        wall += sum(r.wall_s for r in results)
        outcome = yield HostWork(stdio_tests, (suite.cases, [_for_host(r) for r in results], checker,
                                               self.language == "python", self.timeout_s, self.rel_tol, self.abs_tol))
        checked_here = self._host_value(outcome)
        if isinstance(checked_here, Verdict):
            return checked_here
        tests, to_check = checked_here
        if to_check:
            # The checker also runs on the expected output of each case (the same round): a checker that
            # does not accept it is the row's fault (invalid_input); any other failure is the output's.
            jobs = [self._checker_job(checker, suite.cases[i], results[i].stdout) for i in to_check]
            checked = yield jobs + [self._checker_job(checker, suite.cases[i], suite.cases[i]["output"])
                                    for i in to_check]
            for i, result in zip(to_check, checked[:len(jobs)], strict=True):
                status, reason = checker_status(result)
                tests[i]["status"], tests[i]["reason"] = status, reason
            verdict = self._verdict(tests, suite, wall)
            broken = next(((i, r) for i, r in zip(to_check, checked[len(jobs):], strict=True)
                           if checker_status(r)[0] != "passed"), None)
            if verdict.status == "error" or broken is None:
                return verdict
            i, result = broken
            if checker_status(result)[0] == "sandbox_error":
                return error(f"sandbox error while checking the checker: {result.error or result.status}",
                             **verdict.details)
            return invalid_input(f"the checker does not accept the expected output of case {i + 1}: "
                                 f"{checker_status(result)[1]}", **verdict.details)
        return self._verdict(tests, suite, wall)

    def _checker_job(self, checker: str, case: dict[str, Any], actual: str) -> Job:
        # The checker sees the expected output; it runs in its own job, never beside the candidate.
        files: dict[str, str | bytes] = {"checker.py": checker, "input.txt": case["input"],
                                         "expected.txt": case["output"], "actual.txt": actual}
        return Job(command=[self.python, "checker.py", "input.txt", "expected.txt", "actual.txt"], files=files,
                   limits=self._limits(self.timeout_s + 2.0))

    # -- scoring ------------------------------------------------------------------------------

    def _verdict(self, tests: list[dict[str, Any]], suite: TestSuite, wall_s: float) -> Verdict:
        verdict = score_tests(tests, self.score, self.k, form=suite.form, language=self.language, elapsed_s=wall_s,
                              backend=getattr(self._backend(), "name", self.backend))
        if suite.form == "script" and verdict.status == "ok" and not tests:
            verdict.feedback = NO_CHECK
        return verdict


# -- pure helpers (host side) -------------------------------------------------------------


def _for_host(result: ExecResult) -> ExecResult:
    """What the host work reads of a result: its own output and status (a paired job's candidate
    output, in its details, stays behind)."""
    return dataclasses.replace(result, details={})


def judged_tests(nonce: str, result: ExecResult, suite: TestSuite, rel_tol: float = 1e-6,
                 abs_tol: float | None = None) -> list[dict[str, Any]] | Verdict:
    """A harness run's per-test results from its output (host work: run bounded, see ``host``)."""
    return harness_tests(parse_records(result.stdout, nonce), result, suite, rel_tol, abs_tol)


def stdio_tests(cases: list[dict[str, Any]], results: list[ExecResult], checker: str, python: bool,
                timeout_s: float, rel_tol: float = 1e-6,
                abs_tol: float | None = None) -> tuple[list[dict[str, Any]], list[int]]:
    """Per-case results of stdin/stdout runs, compared with a named checker; and the cases a custom
    checker program still has to judge (host work: run bounded, see ``host``)."""
    tests: list[dict[str, Any]] = []
    to_check: list[int] = []
    for i, (case, result) in enumerate(zip(cases, results, strict=True)):
        status, reason = run_status(result, python=python, timeout_s=timeout_s)
        if status == "passed" and checker in CHECKERS:
            if not check_output(checker, case["output"], result.stdout, rel_tol, abs_tol):
                status, reason = "wrong_answer", f"output differs ({checker} checker)"
        elif status == "passed":
            to_check.append(i)
        tests.append(stdio_result(i, case, status, reason, result))
    return tests, to_check


@lru_cache(maxsize=512)
def _prepared_script_cached(tests: str, entry_point: str | None) -> str:
    return json.dumps(prepare_script(tests, entry_point))


def _prepared_script(tests: str, entry_point: str | None) -> dict[str, Any]:
    """The harness's view of an assert script, rewritten once per distinct test code (GRPO repeats it)."""
    return json.loads(_prepared_script_cached(tests, entry_point))


@lru_cache(maxsize=512)
def _prepared_pytest_cached(tests: str) -> str:
    return json.dumps(prepare_pytest(tests))


def _prepared_pytest(tests: str) -> dict[str, Any]:
    return json.loads(_prepared_pytest_cached(tests))


class _Unavailable:
    """Stands in for a backend that could not be started: every job is a sandbox error."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def run_batch(self, jobs: Sequence[Job]) -> list[ExecResult]:
        return [ExecResult("error", error=f"sandbox backend unavailable: {self.reason}") for _ in jobs]


def _run_batch(backend: Any, jobs: list[Job]) -> list[ExecResult]:
    """The backend's results, or one ``error`` result per job when the backend itself fails."""
    try:
        results = list(backend.run_batch(jobs))
        if len(results) != len(jobs):
            raise RuntimeError(f"backend returned {len(results)} results for {len(jobs)} jobs")
        return results
    except Exception as exc:
        return [ExecResult("error", error=f"sandbox backend failed: {type(exc).__name__}: {exc}") for _ in jobs]


@dataclass
class Records:
    """What a harness run reported, read from its stdout; only lines with the job's nonce count."""

    plan: list[str] | None = None
    ready: bool = False
    tests: dict[int, dict[str, Any]] = field(default_factory=dict)
    done: bool = False
    tamper: str = ""
    problems: list[str] = field(default_factory=list)  # harness or sandbox failures
    forged: int = 0  # RESULT lines with a wrong nonce (a candidate printing fake records)


def parse_records(stdout: str, nonce: str) -> Records:
    """Collect the harness's ``RESULT <nonce> <json>`` lines. Exactly one record per test, one
    plan and one end: a duplicate means something other than the harness wrote with the
    nonce, so the whole run counts as tampered."""
    records = Records()
    prefix = f"{_MARK} {nonce} "
    plans = 0
    for line in stdout.splitlines():
        if not line.startswith(_MARK + " "):
            continue
        if not line.startswith(prefix):
            records.forged += 1
            continue
        try:
            data = json.loads(line[len(prefix):])
        except (ValueError, RecursionError):  # not JSON, or JSON Python will not read (a 5,000-digit int)
            records.tamper = records.tamper or "tampering: a malformed result record"
            continue
        if not isinstance(data, dict):
            continue
        if data.get("ready"):
            records.ready = True
        if "plan" in data:
            plans += 1
            if plans > 1:
                records.tamper = records.tamper or "tampering: more than one test plan"
            records.plan = [str(n) for n in data["plan"]]
        elif "more" in data:  # tests found while the tests ran (unittest's), planned before each runs
            if records.plan is None or not isinstance(data["more"], list):
                records.tamper = records.tamper or "tampering: a test outside the plan"
            else:
                records.plan.extend(str(n) for n in data["more"])
        elif "done" in data:
            if records.done:
                records.tamper = records.tamper or "tampering: the run ended twice"
            records.done = True
            records.tamper = records.tamper or str(data.get("tamper") or "")
        elif "i" in data:
            index = int(data["i"])
            if index in records.tests:
                records.tamper = records.tamper or f"tampering: test {index + 1} was reported twice"
            records.tests[index] = data
        for key in ("harness_error", "sandbox_error"):
            if key in data:
                records.problems.append(str(data[key]))
    return records


def harness_tests(records: Records, result: ExecResult, suite: TestSuite, rel_tol: float = 1e-6,
                  abs_tol: float | None = None) -> list[dict[str, Any]] | Verdict:
    """Per-test results of a harness run, or an ``error`` verdict when the sandbox failed."""
    if result.status == "error":
        return error(f"sandbox error: {result.error or 'the sandbox failed'}", tests=[])
    if records.problems:
        return error(f"sandbox error: {records.problems[0]}", tests=[])
    if records.plan is None:
        if suite.form == "pytest" and (records.done or records.ready):
            records.plan = ["collection"]  # the candidate ran (at import) and stopped pytest before it listed tests
        else:
            tail = (result.stderr or result.error)[-300:]
            return error(f"the test harness did not start (exit code {result.exit_code}, {result.status}): {tail}",
                         tests=[])
    tests = []
    classes = Classes()  # the row's own: its values' namedtuple and enum classes, never another row's
    # Every expected value first: the row's own classes come before any the answers bring (which could
    # otherwise fill the cap and leave an expected value unbuildable, an error the completion caused).
    expected = [from_dataset(case["expected"], cache=classes) for case in suite.cases] if suite.form == "call" else []
    missing_status = _EXEC_TO_TEST.get(result.status, "runtime_error")
    missing = {"status": missing_status, "reason": _missing_reason(result), "stdout": "", "stderr": ""}
    for k, name in enumerate(records.plan):
        data = records.tests.get(k)
        if data is None:
            tests.append({"name": name, **missing})
            continue
        if data.get("status") == "no_check":  # a statement of the tests that ran no check is no test
            continue
        test = {"name": str(data.get("name", name)), "status": str(data.get("status", "runtime_error")),
                "reason": str(data.get("reason", "")), "stdout": str(data.get("stdout", "")),
                "stderr": str(data.get("stderr", "")), "time_s": data.get("time_s")}
        if suite.form == "call":
            _judge_call(test, data, expected[k], rel_tol, abs_tol, classes)
        if test["status"] not in (*TEST_STATUSES, "skipped"):
            test["status"] = "runtime_error"
        tests.append(test)
    if not records.done and len(records.tests) >= len(records.plan):
        # Every planned test reported, yet the run did not end: tests it had still to find never ran.
        tests.append({"name": "the rest of the tests", **missing})
    if records.tamper:
        for test in tests:
            if test["status"] in ("passed", "skipped"):
                test["status"] = "wrong_answer"
            test["reason"] = records.tamper
            test["tampering"] = True
    return tests


def _missing_reason(result: ExecResult) -> str:
    if result.status == "timeout":
        return f"the run was killed at its {result.wall_s:.1f}s wall-clock limit before this test finished"
    if result.status == "memory":
        return "the run was killed for exceeding its memory limit before this test finished"
    if result.status == "output_limit":
        return "the run printed more than its output limit before this test finished"
    return f"the program exited (exit code {result.exit_code}) before this test finished"


def _judge_call(test: dict[str, Any], data: Mapping[str, Any], expected: Any, rel_tol: float,
                abs_tol: float | None, classes: Classes | None = None) -> None:
    """Compare a returned value with the expected one (the case's, decoded: see :func:`harness_tests`),
    here on the host (the candidate never saw it). Only a ``returned`` record with a value can pass: a
    bare ``passed`` is not an answer. ``classes``: the row's rebuilt classes, shared by the returned and
    the expected value (a tagged enum member is the same member on both sides)."""
    classes = classes if classes is not None else Classes()
    if test["status"] == "passed":
        test["status"], test["reason"] = "wrong_answer", "no value was returned"
    if test["status"] != "returned":
        return
    try:
        actual = decode(data.get("value"), cache=classes)
    except WireError as exc:
        test["status"], test["reason"] = exc.status, str(exc)
        return
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:  # the answer's doing
        test["status"], test["reason"] = "unsupported_value", f"the returned value cannot be read: {short(str(exc))}"
        return
    test["got"], test["expected"] = short(actual), short(expected)
    if values_equal(actual, expected, rel_tol, abs_tol):
        test["status"], test["reason"] = "passed", ""
    else:
        test["status"], test["reason"] = "wrong_answer", f"returned {short(actual)}, expected {short(expected)}"


def call_name(entry_point: str, case: Mapping[str, Any]) -> str:
    parts = [short(safe_repr(a), 60) for a in case.get("args", [])] + [
        f"{k}={short(safe_repr(v), 60)}" for k, v in case.get("kwargs", {}).items()]
    return short(f"{entry_point}({', '.join(parts)})", 160)


def compile_failure(result: ExecResult) -> tuple[str, str] | None:
    """Status and reason when a C++ compile job did not yield a binary, else None."""
    if result.status == "error":
        return "sandbox_error", result.error or "the sandbox failed while compiling"
    if result.status == "ok" and result.exit_code == 0 and result.stdout.strip():
        return None
    if result.exit_code == 127 or "g++: not found" in result.stderr:
        return "sandbox_error", "g++ is not available in the sandbox"
    if result.status == "timeout":
        return "compile_error", "compilation exceeded its time limit"
    return "compile_error", _head(result.stderr) or f"compilation failed ({result.status})"


def run_status(result: ExecResult, python: bool = True, timeout_s: float = 0.0) -> tuple[str, str]:
    """A stdin/stdout run's status before its output is checked (``passed`` = ran cleanly)."""
    if result.status == "timeout" and timeout_s:
        return "timeout", f"exceeded the {timeout_s:g}s time limit"
    if result.status != "ok":
        status = _EXEC_TO_TEST[result.status]
        return status, result.error if status == "sandbox_error" else _missing_reason(result).split(" before")[0]
    if result.exit_code == 0:
        return "passed", ""
    stderr = result.stderr
    if python and is_compile_error(stderr):
        return "compile_error", _tail(stderr)
    said = _tail(stderr)
    return "runtime_error", f"exit code {result.exit_code}" + (f": {said}" if said else "")


def is_compile_error(stderr: str) -> bool:
    """Whether stderr reports that solution.py did not compile: a compile error after a bare frame line
    for solution.py, with no function frame of solution.py after it. The last error line decides (if
    any does, it does), so each search runs once over the text."""
    last = None
    for last in _COMPILE_ERROR_LINE.finditer(stderr):  # noqa: B007 - only the last match is wanted
        pass
    if last is None:
        return False
    return bool(_BARE_FRAME.search(stderr, 0, last.start())) and not _FUNCTION_FRAME.search(stderr, last.end())


def checker_status(result: ExecResult) -> tuple[str, str]:
    """A custom checker's decision: exit 0 accepts, any other exit rejects. A checker that chokes on
    the output (a crash, running out of time, memory or output) rejects it too: the output caused it
    (a checker that fails on the expected output is caught apart, as the row's fault). Only the sandbox
    failing is a ``sandbox_error``."""
    if result.status == "error":
        return "sandbox_error", f"the checker could not run: {result.error}".strip()
    if result.status != "ok":
        what = {"timeout": "ran out of time", "memory": "ran out of memory",
                "output_limit": "printed past its limit"}.get(result.status, result.status)
        return "wrong_answer", f"the checker {what} on this output"
    if result.exit_code == 0:
        return "passed", ""
    said = _tail(result.stdout or result.stderr)
    return "wrong_answer", f"rejected by the checker (exit code {result.exit_code})" + (f": {said}" if said else "")


def stdio_result(i: int, case: Mapping[str, Any], status: str, reason: str, result: ExecResult) -> dict[str, Any]:
    name = f"case {i + 1}: input {short(' '.join(case['input'].split()), 60)}"
    return {"name": name, "status": status, "reason": reason,
            "stdout": _excerpt(result.stdout), "stderr": _excerpt(result.stderr),
            "expected": _excerpt(case["output"]), "time_s": round(result.wall_s, 4)}


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


# Only the part of a stream that is shown is searched (plus room for the paths shortened in it): a
# compiler's stderr may be 64 MiB, and the verifier's own process reads it.
_SHOWN_ROOM = 4096


def _head(text: str, limit: int = 300) -> str:
    text = text.strip()
    shown = _WORKDIR_PATH.sub(r'File "\1"', text[: limit + _SHOWN_ROOM])
    return shown if len(shown) <= limit and len(text) <= limit + _SHOWN_ROOM else shown[:limit] + "…"


def _tail(text: str, limit: int = 300) -> str:
    text = text.strip()
    shown = _WORKDIR_PATH.sub(r'File "\1"', text[-(limit + _SHOWN_ROOM):])
    return shown if len(shown) <= limit and len(text) <= limit + _SHOWN_ROOM else "…" + shown[-limit:]


def score_tests(tests: list[dict[str, Any]], mode: str, k: int = 1, **details: Any) -> Verdict:
    """Score per-test results: ``all``, ``fraction`` or ``first_k``; any sandbox error is an error verdict."""
    counted = [t for t in tests if t["status"] != "skipped"]
    total = len(counted)
    passed = sum(t["status"] == "passed" for t in counted)
    elapsed = float(details.pop("elapsed_s", 0.0) or 0.0)
    info = {"tests": tests, "passed": passed, "total": total, **details}
    if any(t.get("tampering") for t in tests):
        info["tampering"] = True
    broken = next((t for t in counted if t["status"] == "sandbox_error"), None)
    if broken is not None:
        verdict = error(f"sandbox error in {broken['name']}: {broken['reason']}", **info)
        verdict.elapsed_s = elapsed
        return verdict
    if total == 0:
        return Verdict(score=0.0, correct=False, status="ok", feedback="no test ran", details=info, elapsed_s=elapsed)
    if mode == "fraction":
        score = passed / total
    elif mode == "first_k":
        score = float(all(t["status"] == "passed" for t in counted[:k]))
    else:
        score = float(passed == total)
    failing = next(((n, t) for n, t in enumerate(counted) if t["status"] != "passed"), None)
    if failing is None:
        feedback = f"all {total} tests passed" if total > 1 else "the test passed"
    else:
        n, test = failing
        reason = f": {test['reason']}" if test["reason"] else ""
        feedback = short(f"test {n + 1}/{total} failed ({test['status']}): {test['name']}{reason}", 400)
    return Verdict(score=score, correct=passed == total, status="ok", feedback=feedback, details=info,
                   elapsed_s=elapsed)
