"""The evaluation boundary of a sandboxed scorer (``verifiers/isolated/sandboxed/guard.py``): text reaches
``eval``/``exec``/``compile``, ``pickle`` and ``yaml`` only as plain expressions and plain data.

Each case runs in a forked child (the guard patches the interpreter for good), both polarities: what
sympy's parser and reasoning-gym's scorers make of honest answers still evaluates; every way out of
the expression grammar raises."""

from __future__ import annotations

import os
import pickle
import traceback

import pytest

from rewardsmith.verifiers.isolated.sandboxed import guard


def in_guarded_child(body):
    """``body()``'s result (or ``("raised", exception type name)``) from a forked child with the guard on."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read_end)
        try:
            guard.install()
            try:
                result = ("ok", body())
            except BaseException as exc:
                result = ("raised", type(exc).__name__, str(exc)[:200])
            data = pickle.dumps(result)
        except BaseException:
            data = pickle.dumps(("broken", traceback.format_exc()))
        os.write(write_end, data)
        os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    return pickle.loads(b"".join(chunks))


def _parse(text, **kwargs):
    from sympy.parsing.sympy_parser import parse_expr

    return lambda: str(parse_expr(text, **kwargs))


def _x_c():
    from sympy import Symbol

    return {"x": Symbol("x"), "C": Symbol("C")}


HONEST = [
    ("an arithmetic expression through sympy", _parse("1*3*5 + 9"), "24"),
    ("an antiderivative with its constant", lambda: _parse("x**2/2 + C", local_dict=_x_c())(), "C + x**2/2"),
    ("sympy's functions", _parse("sin(x) + exp(2) + sqrt(4)"), "sin(x) + 2 + exp(2)"),
    ("a rational", _parse("Rational(1, 2) + 1/3"), "5/6"),
    ("sympy's unevaluated parse (compile, then eval)", _parse("2 + 3", evaluate=False), "2 + 3"),
    ("sympify", lambda: str(__import__("sympy").sympify("2*y + y")), "3*y"),
    ("elementary functions and constants", _parse("atan(x) + log(x) + cosh(x) + Abs(x) + E + I"),
     "log(x) + cosh(x) + Abs(x) + atan(x) + E + I"),
    ("a list literal", lambda: eval("[[1, 2], [3, -4.5]]"), [[1, 2], [3, -4.5]]),
    ("strings, tuples, sets, dicts", lambda: eval("('a', {'k': [True, None]}, {1, 2})"),
     ("a", {"k": [True, None]}, {1, 2})),
    ("pure builtins", lambda: eval("sorted([3, 1, 2]) + [abs(-2), max(1, 5), len('abc')]"), [1, 2, 3, 2, 5, 3]),
    ("ast.literal_eval", lambda: __import__("ast").literal_eval("[1, 'a']"), [1, "a"]),
    ("a plain pickle", lambda: pickle.loads(pickle.dumps({"a": [1, 2.5, "x"]})), {"a": [1, 2.5, "x"]}),
    ("a plain YAML document", lambda: __import__("yaml").load("a: [1, 2]", Loader=__import__("yaml").Loader),
     {"a": [1, 2]}),
]


@pytest.mark.parametrize(("case", "body", "expected"), HONEST, ids=[c[0] for c in HONEST])
def test_honest_expressions_still_evaluate(case, body, expected):
    assert in_guarded_child(body) == ("ok", expected)


def _eval_with_gold_in_frame():
    gold = "the gold"  # noqa: F841 - what an answer would read out of the scorer's frame
    return eval("gold")


_MADE_BEFORE = compile("1 + 1", "<made before>", "eval")

ATTACKS = [
    ("an import", lambda: eval("__import__('os').getcwd()")),
    ("a builtin with side effects", lambda: eval("open('/dev/null')")),
    ("exec from eval", lambda: eval("exec('x = 1')")),
    ("attribute access", lambda: eval("().__class__")),
    ("an attribute of an allowed value", lambda: eval("[].append(1)")),
    ("a subscript", lambda: eval("[1, 2][0]")),
    ("a lambda", lambda: eval("(lambda: 1)()")),
    ("a comprehension", lambda: eval("[v for v in range(3)]")),
    ("an f-string", lambda: eval("f'{1}'")),
    ("an assignment expression", lambda: eval("(v := 1)")),
    ("a name from the caller's frame", _eval_with_gold_in_frame),
    ("a statement", lambda: exec("v = 1", {})),
    ("an import of a module not loaded", lambda: exec("import antigravity", {})),
    ("compile of code", lambda: compile("__import__('os')", "<s>", "eval")),
    ("a code object made before the guard", lambda: eval(_MADE_BEFORE)),
    ("sympy's parser with an import", _parse("__import__('os').system('true')")),
    ("sympy's parser with exec", _parse("exec('import os')")),
    ("sympy's parser with attribute access", _parse("Symbol('x').__class__")),
    ("sympify with a builtin", lambda: __import__("sympy").sympify("open('/dev/null')")),
    ("sympy's integral, left for the scorer to undo", _parse("Integral(x**2, x)")),
    ("sympy's CAS doing the task", _parse("expand((x + 1)*(x - 2))")),
    ("a number written without digits", _parse("factorial(floor(pi) + sign(x))")),
    ("sympy's file writer", _parse("preview(x, viewer='file', filename='out.png')")),
    ("sympy's code generator", _parse("lambdify(x, x)")),
    ("a pickle that calls a function", lambda: pickle.loads(b"cos\ngetcwd\n(tR.")),
    ("a YAML tag that calls a function",
     lambda: __import__("yaml").load("!!python/object/apply:os.getcwd []", Loader=__import__("yaml").UnsafeLoader)),
    ("yaml.unsafe_load", lambda: __import__("yaml").unsafe_load("!!python/object/apply:os.getcwd []")),
]


@pytest.mark.parametrize(("case", "body"), ATTACKS, ids=[c[0] for c in ATTACKS])
def test_every_way_out_of_the_grammar_raises(case, body):
    outcome = in_guarded_child(body)
    assert outcome[0] == "raised", outcome


def test_names_are_allowed_by_what_they_are_not_what_they_are_called():
    import builtins

    import sympy

    assert guard.allowed(sympy.sin) and guard.allowed(sympy.Integer(2)) and guard.allowed(3)
    assert guard.allowed(sympy.Symbol("C")) and guard.allowed(sympy.pi) and guard.allowed(sympy.Rational)
    assert guard.allowed(builtins.abs) and not guard.allowed(builtins.open) and not guard.allowed(builtins.exec)
    assert not guard.allowed(os.system) and not guard.allowed(os)
    assert not guard.allowed(lambda: 1)  # a function of ours, whatever its name
    for operation in (sympy.integrate, sympy.Integral, sympy.expand, sympy.factorial, sympy.floor, sympy.preview,
                      sympy.lambdify, sympy.sympify, sympy.Function):
        assert not guard.allowed(operation), operation
