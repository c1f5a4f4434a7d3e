"""The code verifier's judged runs, host side: the two sandbox programs and the tests' plan.

A judged run is one sandbox job of two processes (see :class:`rewardsmith.sandbox.Peer`):
the *candidate* (:mod:`~rewardsmith.verifiers.code.sandboxed.candidate`) loads the solution and
answers requests; the *judge* (:mod:`~rewardsmith.verifiers.code.sandboxed.judge`) runs the tests,
as another user, in a directory the candidate cannot read, and talks to the candidate only in
plain data (:mod:`~rewardsmith.verifiers.code.sandboxed.wire`). Both are handed to ``python3 -c``
as source (standard library only, the package ``sandboxed/``), so no harness file exists for
anyone to rewrite.

Here, on the host, the tests are prepared once per distinct test code (GRPO repeats it):
each top-level statement that asserts something becomes one test with its own time limit
and record. Which of the solution's names the tests see is decided in :mod:`~rewardsmith.verifiers.code.names`.
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
    """What the judge needs to run an assert script: statements, test names, mode, names used.

    A ``check(candidate)`` function (with an ``entry_point``) runs as ``check(entry_point)``;
    otherwise the module's asserts are the tests. Each top-level statement that asserts
    something (in ``check``'s body, or at module level) becomes one test.
    """
    import ast

    tree = ast.parse(tests)
    check_mode = bool(entry_point) and any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
    tree = _ExplainedAsserts().visit(tree)
    names = _mark_cases(tree, tests, "check" if check_mode else None)
    whole = not names
    if whole:
        names = [f"check({entry_point})" if check_mode else "tests"]
    statements = [ast.unparse(node) for node in tree.body]
    return {"names": names, "check_mode": check_mode, "whole": whole, "statements": statements}


def prepare_pytest(tests: str) -> dict:
    """The test functions a pytest file declares: any other collected test is refused."""
    import ast

    return {"static": _static_pytest_tests(ast.parse(tests))}


class _ExplainedAsserts:
    """``assert a == b`` becomes ``assert __h_cmp(("==",), [a, b])``: the judge evaluates the same
    comparison and, when it is false, says what the two sides were."""

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
                return node

        return Transformer().visit(tree)


def _helper(name, *args):
    import ast

    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _contains_assert(node):
    import ast

    return any(isinstance(n, ast.Assert) and not isinstance(n.test, ast.Constant) for n in ast.walk(node))


def _mark_cases(tree, source, check_name):
    """Wrap each top-level statement that asserts something (in ``check``'s body, or at
    module level) in begin/end calls, so each is one test with its own time limit and
    result. Returns the tests' names (their source, shortened)."""
    import ast
    import io

    target = tree
    if check_name is not None:
        target = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == check_name)
    names, body = [], []
    # Split once, not per statement, and only where Python's tokenizer ends a line.
    lines = [line.encode("utf-8") for line in io.StringIO(source, newline="").readlines()]
    for stmt in target.body:
        if not _contains_assert(stmt):
            body.append(stmt)
            continue
        k = len(names)
        segment = _segment(lines, stmt) or ast.unparse(stmt)
        names.append(" ".join(segment.split())[:160])
        handler = ast.ExceptHandler(type=ast.Name(id="BaseException", ctx=ast.Load()), name="__h_exc",
                                    body=[ast.Expr(_helper("__h_end", ast.Constant(k),
                                                           ast.Name(id="__h_exc", ctx=ast.Load())))])
        body.append(ast.Expr(_helper("__h_begin", ast.Constant(k))))
        body.append(ast.Try(body=[stmt], handlers=[handler], finalbody=[],
                            orelse=[ast.Expr(_helper("__h_end", ast.Constant(k), ast.Constant(None)))]))
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
    """Test functions a pytest file declares (``test_*`` at top level and in ``Test*`` classes)."""
    import ast

    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found.extend(n.name for n in node.body
                         if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test"))
    return found


