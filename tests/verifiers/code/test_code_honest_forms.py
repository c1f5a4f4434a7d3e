"""Issue 35, section 4: honest solutions that use Python's protocols, and tests that patch around them.

Tests use the solution's objects the way Python allows — ``next`` on its generators, ``with`` on its
context managers, ``asyncio.run``/``await``/``async for``/``async with`` on its coroutines,
``isinstance``/``issubclass`` against its classes, ``in`` on what it yields — and pytest tests patch
the solution's surroundings with pytest's fixtures (``monkeypatch`` on ``builtins.input``, a module's
attribute, ``sys.stdin``, ``sys.argv``, the environment, the directory; ``capsys``/``capfd``;
``tmp_path``): the patch reaches the solution's process. Each honest case has a wrong look-alike
that must score 0. Where a form cannot be supported safely, the test's status is
``unsupported_test`` and its reason names the construct: a context manager of the solution that
would swallow the test's exception, a patch with a value that cannot cross, a directory the
solution cannot enter.
"""

from __future__ import annotations

import pytest
from code_cases import Case, code, module_tests

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
SPEC = {"type": "code", "timeout_s": 3, "memory_mb": 512}
CASES: list[Case] = []


def pair(name: str, honest: str, wrong: str, fields: dict) -> None:
    """The honest solution must pass; the wrong one must fail, and the honest one pass right after it."""
    CASES.append(Case(f"{name}-honest", honest, fields, 1.0))
    CASES.append(Case(f"{name}-wrong", wrong, fields, 0.0, honest=honest))


def pytest_file(text: str) -> dict:
    return {"tests": None, "pytest": code(text)}


# -- generators ------------------------------------------------------------------------------------

GENERATORS = """
def countdown(n):
    while n > 0:
        yield n
        n -= 1


def naturals():
    n = 0
    while True:
        yield n
        n += 1


def echo():
    received = None
    while True:
        received = yield received
"""
GENERATORS_WRONG = GENERATORS.replace("yield n\n        n -= 1", "yield n - 1\n        n -= 1")
pair("generators-pytest", GENERATORS, GENERATORS_WRONG, pytest_file("""
    import itertools

    from solution import countdown, echo, naturals


    def test_next():
        gen = countdown(3)
        assert next(gen) == 3
        assert next(gen) == 2
        assert list(gen) == [1]
        assert next(gen, "done") == "done"


    def test_endless():
        assert list(itertools.islice(naturals(), 4)) == [0, 1, 2, 3]
        assert 5 in naturals()


    def test_send_and_for():
        g = echo()
        next(g)
        assert g.send("hi") == "hi"
        assert sum(x for x in countdown(4)) == 10 and sorted(countdown(3)) == [1, 2, 3]
    """))
pair("generators-mbpp", GENERATORS, GENERATORS_WRONG, {"tests": [
    "assert next(countdown(3)) == 3", "g = countdown(2)", "next(g)", "assert next(g) == 1",
    "assert 7 in naturals()", "assert [x for x in countdown(2)] == [2, 1]"]})

# -- context managers ------------------------------------------------------------------------------

RESOURCE = """
import contextlib


class Resource:
    def __init__(self, name):
        self.name = name
        self.log = []

    def __enter__(self):
        self.log.append("open")
        return self

    def __exit__(self, kind, exc, tb):
        self.log.append("close" if kind is None else "close after " + kind.__name__)
        return False

    def read(self):
        return self.name.upper()


def open_thing(name):
    return Resource(name)


@contextlib.contextmanager
def tagged(tag):
    yield "<" + tag + ">"
"""
RESOURCE_TESTS = pytest_file("""
    import pytest

    from solution import open_thing, tagged


    def test_with():
        thing = open_thing("abc")
        with thing as handle:
            assert handle.read() == "ABC"
        assert thing.log == ["open", "close"]


    def test_exit_sees_the_error():
        thing = open_thing("abc")
        with pytest.raises(ValueError):
            with thing:
                raise ValueError("boom")
        assert thing.log == ["open", "close after ValueError"]


    def test_generator_based():
        with tagged("b") as t:
            assert t == "<b>"
    """)
pair("context-managers-pytest", RESOURCE, RESOURCE.replace("self.name.upper()", "self.name"), RESOURCE_TESTS)
pair("context-managers-no-cleanup", RESOURCE, RESOURCE.replace('self.log.append("close" if', 'None if'),
     RESOURCE_TESTS)
pair("context-managers-mbpp", RESOURCE, RESOURCE.replace('"<" + tag + ">"', 'tag'), {"tests": [
    "with open_thing('xy') as h:\n    assert h.read() == 'XY'", "with tagged('i') as t:\n    assert t == '<i>'"]})
# A context manager that swallows what its block raised would turn the block's failed check (or the
# solution's own error, raised on purpose) into a pass: never honoured, and the verdict says so.
SWALLOW = RESOURCE.replace("        return False\n\n    def read", "        return True\n\n    def read")
CASES.append(Case("context-manager-swallows-failed-check", SWALLOW.replace("self.name.upper()", "self.name"),
                  RESOURCE_TESTS, 0.0, honest=RESOURCE, reason="swallow"))
CASES.append(Case("context-manager-swallows-own-error", SWALLOW.replace("return self.name.upper()",
                                                                         "raise KeyError(self.name)"),
                  {"tests": ["with open_thing('xy') as h:\n    assert h.read() == 'XY'"]}, 0.0, honest=RESOURCE,
                  statuses=("unsupported_test",), reason="swallow"))
# An honest one that is meant to swallow is a form the judge cannot support safely: unsupported, by name.
CASES.append(Case("context-manager-meant-to-swallow", "import contextlib\n\n\ndef ignoring(kind):\n"
                  "    return contextlib.suppress(kind)\n",
                  pytest_file("""
                      from solution import ignoring


                      def test_suppress():
                          with ignoring(KeyError):
                              {}["missing"]
                      """), 0.0, statuses=("unsupported_test",), reason="swallow"))

# -- coroutines ------------------------------------------------------------------------------------

ASYNC = """
import asyncio


async def double(x):
    await asyncio.sleep(0)
    return 2 * x


async def total(xs):
    parts = await asyncio.gather(*(double(x) for x in xs))
    return sum(parts)


async def ticks(n):
    for i in range(n):
        await asyncio.sleep(0)
        yield i


class Session:
    async def __aenter__(self):
        self.open = True
        return self

    async def __aexit__(self, *exc):
        self.open = False
        return False

    async def fetch(self, key):
        return key * 2
"""
pair("coroutines-pytest", ASYNC, ASYNC.replace("return 2 * x", "return x + 2"), pytest_file("""
    import asyncio

    from solution import Session, double, ticks, total


    def test_run():
        assert asyncio.run(double(21)) == 42
        assert asyncio.run(total([1, 2, 3])) == 12


    def test_await_and_gather():
        async def main():
            a = await double(1)
            b, c = await asyncio.gather(double(2), double(3))
            return a + b + c

        assert asyncio.run(main()) == 12
    """))
pair("async-for-and-with", ASYNC, ASYNC.replace("yield i", "yield i + 1"), pytest_file("""
    import asyncio

    from solution import Session, ticks


    def test_async_for_and_with():
        async def main():
            seen = [i async for i in ticks(3)]
            async with Session() as session:
                got = await session.fetch("ab")
                inside = session.open
            return seen, got, inside

        assert asyncio.run(main()) == ([0, 1, 2], "abab", True)
    """))
pair("coroutines-mbpp", ASYNC, ASYNC.replace("return sum(parts)", "return max(parts)"), {
    "tests": ["assert asyncio.run(double(21)) == 42", "assert asyncio.run(total([1, 2, 3])) == 12"],
    "test_imports": ["import asyncio"]})

# -- isinstance and issubclass against the solution's classes ---------------------------------------

SHAPES = """
class Shape:
    def area(self):
        raise NotImplementedError


class Circle(Shape):
    def __init__(self, r):
        self.r = r

    def area(self):
        return 3 * self.r * self.r


class Square(Shape):
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side


def make(kind, size):
    return Circle(size) if kind == "circle" else Square(size)
"""
SHAPES_WRONG = SHAPES.replace("class Square(Shape):", "class Square:")
pair("isinstance-pytest", SHAPES, SHAPES_WRONG, pytest_file("""
    from solution import Circle, Shape, Square, make


    def test_isinstance():
        c = make("circle", 2)
        assert isinstance(c, Shape) and isinstance(c, Circle) and not isinstance(c, Square)
        assert isinstance(make("square", 1), (Circle, Square))
        assert not isinstance(5, Shape)
        assert c.area() == 12


    def test_issubclass():
        assert issubclass(Circle, Shape) and issubclass(Square, Shape) and not issubclass(Shape, Circle)
    """))
pair("isinstance-mbpp", SHAPES, SHAPES.replace("return Circle(size) if", "return Square(size) if"), {"tests": [
    "assert isinstance(make('circle', 2), Circle)", "assert isinstance(make('square', 2), Shape)",
    "assert issubclass(Square, Shape)"]})

# The tests' own objects handed to the solution: a callable one is called back, an instance of a
# class both define is rebuilt as the solution's.
APPLY = "class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n\n" \
        "def apply(f, x):\n    return f(x)\n\n\ndef norm1(p):\n    return abs(p.x) + abs(p.y)\n"
pair("tests-own-objects", APPLY, APPLY.replace("return f(x)", "return x"), {"tests": [
    "class Triple:\n    def __call__(self, v):\n        return 3 * v",
    "assert apply(Triple(), 5) == 15",
    "class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y",
    "assert norm1(Point(-1, 2)) == 3"]})

# -- pytest fixtures that patch around the solution ---------------------------------------------------

ASK = "def ask_age():\n    age = int(input('Age? '))\n    return age + 1\n"
pair("monkeypatch-input", ASK, ASK.replace("age + 1", "age"), pytest_file("""
    from solution import ask_age


    def test_input(monkeypatch):
        answers = iter(["41"])
        monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
        assert ask_age() == 42


    def test_input_again(monkeypatch):
        monkeypatch.setattr("builtins.input", lambda prompt="": "9")
        assert ask_age() == 10
    """))
GREETING = "import os\n\n\ndef greeting():\n    return 'Hello, ' + os.environ.get('USER_NAME', 'stranger')\n"
pair("monkeypatch-env", GREETING, "def greeting():\n    return 'Hello, stranger'\n", pytest_file("""
    from solution import greeting


    def test_set(monkeypatch):
        monkeypatch.setenv("USER_NAME", "Ada")
        assert greeting() == "Hello, Ada"


    def test_removed(monkeypatch):
        monkeypatch.setenv("USER_NAME", "Bo")
        monkeypatch.delenv("USER_NAME")
        assert greeting() == "Hello, stranger"


    def test_restored():
        assert greeting() == "Hello, stranger"
    """))
LINES = ("import sys\n\n\ndef sum_lines():\n    return sum(int(line) for line in sys.stdin)\n\n\n"
         "def first_word():\n    return input().split()[0]\n\n\ndef first_arg():\n    return sys.argv[1]\n")
pair("stdin-and-argv", LINES, LINES.replace("split()[0]", "split()[-1]"), pytest_file("""
    import io
    import sys

    from solution import first_arg, first_word, sum_lines


    def test_stdin(monkeypatch):
        monkeypatch.setattr(sys, "stdin", io.StringIO("1\\n2\\n3\\n"))
        assert sum_lines() == 6


    def test_input_reads_stdin(monkeypatch):
        monkeypatch.setattr("sys.stdin", io.StringIO("hello world\\n"))
        assert first_word() == "hello"


    def test_argv(monkeypatch):
        monkeypatch.setattr(sys, "argv", ["prog", "x"])
        assert first_arg() == "x"
    """))
SHOUT = "import sys\n\n\ndef shout(text):\n    print(text.upper())\n    print('warn', file=sys.stderr)\n"
pair("capsys-capfd", SHOUT, SHOUT.replace("text.upper()", "text"), pytest_file("""
    from solution import shout


    def test_capsys(capsys):
        shout("hi")
        out, err = capsys.readouterr()
        assert out == "HI\\n" and err == "warn\\n"


    def test_capfd(capfd):
        shout("yo")
        assert capfd.readouterr().out == "YO\\n"
    """))
FILES = ("def save(name, text):\n    with open(name, 'w') as handle:\n        handle.write(text)\n\n\n"
         "def load(name):\n    with open(name) as handle:\n        return handle.read()\n")
pair("tmp-path-chdir", FILES, FILES.replace("handle.write(text)", "handle.write(text * 2)"), pytest_file("""
    from solution import load, save


    def test_chdir(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        save("note.txt", "hi")
        assert (tmp_path / "note.txt").read_text() == "hi"
        (tmp_path / "in.txt").write_text("data")
        assert load("in.txt") == "data"
    """))
ROLL = ("import random\nimport time\n\n\ndef roll():\n    return random.randint(1, 6)\n\n\n"
        "def wait_and_say(seconds):\n    time.sleep(seconds)\n    return 'done'\n")
pair("monkeypatch-module", ROLL, ROLL.replace("return random.randint(1, 6)", "return 3"), pytest_file("""
    import random
    import time

    from solution import roll, wait_and_say


    def test_randint(monkeypatch):
        monkeypatch.setattr(random, "randint", lambda a, b: 4)
        assert roll() == 4


    def test_sleep(monkeypatch):
        slept = []
        monkeypatch.setattr(time, "sleep", slept.append)
        assert wait_and_say(100) == "done" and slept == [100]
    """))

# Patches that cannot reach the solution's process: unsupported, with the construct named.
CASES.append(Case("patch-with-a-class", "import datetime\n\n\ndef today():\n    return datetime.date.today()\n",
                  pytest_file("""
                      import datetime

                      from solution import today


                      class FakeDate(datetime.date):
                          @classmethod
                          def today(cls):
                              return cls(2020, 1, 2)


                      def test_today(monkeypatch):
                          monkeypatch.setattr(datetime, "date", FakeDate)
                          assert today() == datetime.date(2020, 1, 2)
                      """), 0.0, statuses=("unsupported_test",), reason="a class (FakeDate)"))
CASES.append(Case("patch-with-an-object", ROLL, pytest_file("""
    import random

    from solution import roll


    def test_seeded(monkeypatch):
        monkeypatch.setattr(random, "_inst", random.Random(5))
        assert 1 <= roll() <= 6
    """), 0.0, statuses=("unsupported_test",), reason="cannot reach the solution's process"))
CASES.append(Case("chdir-where-the-solution-cannot-go", FILES, pytest_file("""
    import os

    from solution import load


    def test_here(monkeypatch):  # a folder of the judge's own, which the solution cannot reach
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "private")
        os.makedirs(here, exist_ok=True)
        monkeypatch.chdir(here)
        assert load("../test_solution.py")
    """), 0.0, statuses=("unsupported_test",), reason="cannot enter", follow=(FILES, {"tests": None, "pytest": code("""
    from solution import load, save


    def test_chdir(tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        save("a.txt", "x")
        assert load("a.txt") == "x"
    """)})))
CASE_BY_ID = {case.id: case for case in CASES}
outcome, test_case = module_tests(CASES, SPEC)  # one batch per backend; one test per case and backend


def test_every_form_has_an_honest_and_a_wrong_case() -> None:
    forms = ("generators", "context-manager", "coroutines", "isinstance", "monkeypatch", "stdin", "capsys",
             "tmp-path")
    for form in forms:
        chosen = [c for c in CASES if c.id.startswith(form)]
        assert {c.expect for c in chosen} == {0.0, 1.0}, form
    assert sum(1 for c in CASES if "unsupported_test" in c.statuses or c.reason) >= 5
