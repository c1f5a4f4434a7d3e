"""The code verifier's judged runs, host side: the two sandbox programs and the tests' plan.

A judged run is one sandbox job of two processes (see :class:`rewardsmith.sandbox.Peer`):
the *candidate* (:mod:`~rewardsmith.verifiers.code.sandboxed.candidate`) loads the solution and
answers requests; the *judge* (:mod:`~rewardsmith.verifiers.code.sandboxed.judge`) runs the tests,
as another user, in a directory the candidate cannot read, and talks to the candidate only in
plain data (:mod:`~rewardsmith.verifiers.code.sandboxed.wire`). Both are handed to ``python3 -c``
as source (standard library only, the package ``sandboxed/``), so no harness file exists for
anyone to rewrite.

Here, on the host, the tests are prepared once per distinct test code (GRPO repeats it):
each top-level statement becomes a unit with its own time limit and record, and every assert
counts when it runs; which units are tests is decided in the judge, by what they do when they
run (see :func:`prepare_script`). Which of the solution's names the tests see is decided in
:mod:`~rewardsmith.verifiers.code.names`.
"""

import functools
from pathlib import Path

from rewardsmith.sandbox.program import bootstrap, program_source

_SANDBOXED = Path(__file__).with_name("sandboxed")


def sandbox_source(*modules: str) -> str:
    """The text of ``modules`` (file names in ``sandboxed/``) as one program (see
    :func:`rewardsmith.sandbox.program.program_source`)."""
    return program_source(_SANDBOXED, *modules)


@functools.cache
def judge_program() -> str:
    """The judge's ``-c`` program, built on first use (not at import: ``build()`` imports every verifier)."""
    return bootstrap(sandbox_source("wire.py", "judge.py"), "<judge>")


@functools.cache
def candidate_program() -> str:
    """The candidate's ``-c`` program, built on first use."""
    return bootstrap(sandbox_source("wire.py", "candidate.py"), "<candidate>")


def prepare_script(tests: str, entry_point: str | None = None) -> dict:
    """What the judge needs to run an assert script: its statements, each a unit, and their names.

    The whole program runs, as ``python tests.py`` would (``__name__ == "__main__"``), then, with a
    ``check(candidate)`` function and an ``entry_point``, ``check(entry_point)``. Every top-level
    statement (of the module, and of ``check``'s body) is a *unit* with its own time limit; what a
    unit counts for is decided by what it does when it runs, in the judge: a unit that raises is a
    failed test wherever it stands; one that ran a check (an ``assert`` anywhere in the tests, a
    ``unittest`` assertion method) and raised nothing is a passed test; one that ran no check
    (a definition, an import, a helper's ``def`` whose asserts never run) is not a test at all.
    ``budget`` is how many tests the job's wall clock allows for (units, plus ``test*`` methods a
    ``unittest.TestCase`` may run): a cap, never a count.
    """
    import ast

    tree = ast.parse(tests)
    check_mode = bool(entry_point) and any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
    methods = sum(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
                  for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for n in c.body)
    tree = _CountedAsserts().visit(tree)
    lines = _source_lines(tests)
    check_names = []
    if check_mode:  # check's units come after the module's, one per top-level statement but __future__'s
        check = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check")
        check_names = _mark_units(check, lines, first=sum(not _is_future(n) for n in tree.body))
    names = _mark_units(tree, lines) + check_names
    statements = [ast.unparse(node) for node in tree.body]
    return {"names": names, "check_mode": check_mode, "statements": statements, "budget": len(names) + methods}


def prepare_pytest(tests: str) -> dict:
    """The test functions a pytest file declares at its top level and in its ``Test*`` classes:
    each must be collected (a test the file declares never silently disappears)."""
    import ast

    return {"static": _static_pytest_tests(ast.parse(tests))}


class _CountedAsserts:
    """Every ``assert`` counts as a check when it runs (``__h_ran``), wherever it stands: at top
    level, in ``check``, in a helper, in a ``unittest`` method. ``assert a == b`` becomes
    ``assert __h_cmp(("==",), [a, b])``: the judge evaluates the same comparison, counts it and,
    when it is false, says what the two sides were."""

    def visit(self, tree):
        import ast

        ops = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
               ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}

        class Transformer(ast.NodeTransformer):
            def visit_Assert(self, node):
                if isinstance(node.test, ast.Compare) and node.msg is None:
                    names = ast.Tuple(elts=[ast.Constant(ops[type(op)]) for op in node.test.ops], ctx=ast.Load())
                    values = ast.List(elts=[node.test.left, *node.test.comparators], ctx=ast.Load())
                    node.test = _helper("__h_cmp", names, values)
                else:
                    node.test = _helper("__h_ran", node.test)
                return node

        return Transformer().visit(tree)


def _helper(name, *args):
    import ast

    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _source_lines(source):
    """The source's lines as UTF-8 bytes (the AST's offsets are bytes), split only where Python's
    tokenizer ends a line."""
    import io

    return [line.encode("utf-8") for line in io.StringIO(source, newline="").readlines()]


def _is_future(node) -> bool:
    import ast

    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _mark_units(target, lines, first=0):
    """Make each top-level statement of ``target`` (a module or ``check``) a unit::

        try:
            __h_begin(k)
            <statement>
        except BaseException as __h_exc:
            __h_fail(k, __h_exc)
        finally:
            __h_close(k)

    ``__h_fail`` records the failure (or, inside another unit, raises it on: a unit is only ever
    a top-level one); ``__h_close`` records the unit's outcome when it did not fail, also when the
    statement left by ``return``. Units are numbered from ``first``. Returns the units' names (their
    source, shortened)."""
    import ast

    names, body = [], []
    for stmt in target.body:
        if _is_future(stmt):
            body.append(stmt)  # a compiler directive, legal only as the first statement of its code
            continue
        k = first + len(names)
        segment = _segment(lines, stmt) or ast.unparse(stmt)
        names.append(" ".join(segment.split())[:160])
        handler = ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name="__h_exc",
                                    body=[ast.Expr(_helper("__h_fail", ast.Constant(k),
                                                           ast.Name(id="__h_exc", ctx=ast.Load())))])
        body.append(ast.Try(body=[ast.Expr(_helper("__h_begin", ast.Constant(k))), stmt], handlers=[handler],
                            orelse=[], finalbody=[ast.Expr(_helper("__h_close", ast.Constant(k)))]))
    target.body = body
    return names


def _segment(lines, node):
    """The source text of ``node`` (offsets are in UTF-8 bytes), or "" when it has no position."""
    first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if first is None or last is None or last > len(lines):
        return ""
    if first == last:
        return lines[first - 1][node.col_offset:node.end_col_offset].decode("utf-8", "replace")
    parts = [lines[first - 1][node.col_offset:], *lines[first:last - 1], lines[last - 1][:node.end_col_offset]]
    return b"".join(parts).decode("utf-8", "replace")


def _static_pytest_tests(tree):
    """Test functions a pytest file declares (``test_*`` at top level and in ``Test*`` classes that do
    not say ``__test__ = False``, which pytest never collects)."""
    import ast

    def opted_out(klass):
        return any(isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "__test__" for t in n.targets)
                   and isinstance(n.value, ast.Constant) and n.value.value is False for n in klass.body)

    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test") and not opted_out(node):
            found.extend(n.name for n in node.body
                         if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    return found


