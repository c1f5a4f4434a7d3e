"""The evaluation boundary of a sandboxed scorer: text becomes a value only through a closed grammar.

Some third-party scorers hand the answer to ``eval`` (directly, or through sympy's ``parse_expr``
and ``sympify``, which build Python source and ``eval`` it). Inside the sandbox that can harm
nothing outside the answer's own process, but code run there could still decide its own verdict:
read the gold out of the scorer's frame, or return a value built to compare equal. So, in the
process that scores one answer (and only there), :func:`install` replaces the interpreter's
text-to-code entry points:

* ``eval``, ``exec`` and ``compile`` accept only source (or a code object they vetted themselves)
  whose syntax tree is an *expression* of literals, containers, operators, comparisons and
  conditionals, over names that resolve (in the namespace the caller gave, else the builtins) to a
  value of :func:`allowed` — a plain scalar, one of :data:`PURE_BUILTINS`, a sympy symbol or number,
  or one of sympy's elementary objects in :data:`MATH_NAMES` — and calls of such names. No
  attribute access, no subscript, no name with a leading underscore, no lambda, comprehension,
  f-string, assignment or star. ``exec`` also
  accepts imports of modules that are already loaded (sympy's parser runs ``from sympy import *``).
  A name is looked up in the namespace the caller passed; with none, in the builtins only (never
  the caller's frame, which holds the gold).
* ``pickle`` and ``yaml`` load only plain data.

Anything else raises :class:`Refused` (a ``ValueError``) where the scorer called ``eval``: the
scorer treats it as an unreadable answer. Standard library only: shipped into the sandbox as source.
"""

from __future__ import annotations

import ast
import builtins
import sys

# What an answer's expression may call or name among the builtins: pure functions of their
# arguments and value constructors (no I/O, no introspection, no code, no attribute access).
PURE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "float", "frozenset", "int",
    "len", "list", "max", "min", "pow", "range", "reversed", "round", "set", "sorted", "str", "sum",
    "tuple", "zip",
})
# The math an answer's expression may name, by sympy's names: numbers, symbols, constants and the
# elementary functions (what an answer to an arithmetic, algebra or calculus task is written in; Add,
# Mul and Pow are what the parser writes its operators as with evaluate=False). Not
# the CAS's operations (integrate, Integral, expand, solve, factorial, floor, sign ...): with those an
# answer would make the scorer do the task, or write numbers without digits; nor anything else sympy
# exports (preview writes files, lambdify runs code).
MATH_NAMES = frozenset({
    "Integer", "Float", "Rational", "Symbol", "pi", "E", "I", "Add", "Mul", "Pow",
    "sqrt", "cbrt", "root", "exp", "log", "ln", "Abs",
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc", "atan2",
    "sinh", "cosh", "tanh", "coth", "sech", "csch", "asinh", "acosh", "atanh", "acoth", "asech", "acsch",
})
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_NODES = (
    ast.Expression, ast.Constant, ast.Name, ast.Load, ast.Tuple, ast.List, ast.Set, ast.Dict,
    ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.keyword,
    ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
)


class Refused(ValueError):
    """Text that is not a plain expression reached an evaluation entry point."""


def allowed(value: object) -> bool:
    """Whether an expression may name ``value``: a scalar, a pure builtin, a symbol or number of sympy's
    (an answer's variables), or one of sympy's objects named in :data:`MATH_NAMES` (by identity)."""
    if isinstance(value, _SCALARS):
        return True
    name = getattr(value, "__name__", None)
    if isinstance(name, str) and name in PURE_BUILTINS and getattr(builtins, name, None) is value:
        return True
    sympy = sys.modules.get("sympy")
    if sympy is None:
        return False
    if isinstance(value, sympy.Symbol | sympy.Number):
        return True
    return any(getattr(sympy, math, None) is value for math in MATH_NAMES)


def check_expression(tree: ast.Expression, namespaces: tuple[dict, ...]) -> None:
    """Raise :class:`Refused` unless ``tree`` is in the grammar above, every name resolved in ``namespaces``."""
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise Refused(f"an answer may not use {type(node).__name__} in an evaluated expression")
        if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name):
            raise Refused("an evaluated expression may only call a name")
        if isinstance(node, ast.keyword) and node.arg is None:
            raise Refused("an evaluated expression may not unpack keyword arguments")
        if isinstance(node, ast.Name):
            if node.id.startswith("_"):
                raise Refused(f"an evaluated expression may not name {node.id!r}")
            value = _lookup(node.id, namespaces)
            if not allowed(value):
                raise Refused(f"an evaluated expression may not use {node.id!r}")


def _lookup(name: str, namespaces: tuple[dict, ...]) -> object:
    for space in namespaces:
        if name in space:
            return space[name]
    raise Refused(f"name {name!r} is not defined for an evaluated expression")


def _namespaces(globals_: dict | None, locals_: dict | None) -> tuple[dict, ...]:
    spaces = [s for s in (locals_, globals_) if isinstance(s, dict)]
    # Never the caller's frame: with no namespace given, only the pure builtins resolve.
    spaces.append({name: getattr(builtins, name) for name in PURE_BUILTINS})
    return tuple(spaces)


class _Boundary:
    """The replacement entry points, closing over the originals."""

    def __init__(self) -> None:
        self.eval, self.exec, self.compile = builtins.eval, builtins.exec, builtins.compile
        # Code objects our compile made, with their trees (kept alive, so ids stay unique): their names
        # are checked when they are evaluated, against the namespaces given then.
        self.vetted: dict[int, tuple[object, ast.AST]] = {}

    def _tree(self, source: object, mode: str) -> ast.AST:
        if isinstance(source, ast.AST):
            return source
        if isinstance(source, bytes | bytearray):
            source = bytes(source).decode("utf-8")
        if not isinstance(source, str):
            raise Refused(f"cannot evaluate a {type(source).__name__}")
        return ast.parse(source, mode=mode)

    def _check(self, tree: ast.AST, namespaces: tuple[dict, ...]) -> None:
        if isinstance(tree, ast.Expression):
            check_expression(tree, namespaces)
            return
        if not isinstance(tree, ast.Module | ast.Interactive):
            raise Refused(f"cannot evaluate a {type(tree).__name__}")
        for statement in tree.body:
            if isinstance(statement, ast.Expr):
                check_expression(ast.Expression(statement.value), namespaces)
            elif isinstance(statement, ast.Import | ast.ImportFrom):
                self._check_import(statement)
            else:
                raise Refused(f"an answer may not run a {type(statement).__name__} statement")

    @staticmethod
    def _check_import(statement: ast.Import | ast.ImportFrom) -> None:
        if isinstance(statement, ast.ImportFrom):
            if statement.level or statement.module not in sys.modules:
                raise Refused("only an already loaded module may be imported while an answer is scored")
            return
        for alias in statement.names:
            if alias.name not in sys.modules:
                raise Refused("only an already loaded module may be imported while an answer is scored")

    def _code(self, source: object, mode: str, globals_: dict | None, locals_: dict | None) -> object:
        namespaces = _namespaces(globals_, locals_)
        known = self.vetted.get(id(source))
        if known is not None and known[0] is source:
            self._check(known[1], namespaces)
            return source
        if type(source).__name__ == "code":
            raise Refused("a code object this scorer did not compile under the guard")
        tree = self._tree(source, mode)
        self._check(tree, namespaces)
        return self.compile(tree, "<answer>", mode)

    def guarded_eval(self, source, globals_=None, locals_=None, /):
        code = self._code(source, "eval", globals_, locals_)
        return self.eval(code, *_given(globals_, locals_))

    def guarded_exec(self, source, globals_=None, locals_=None, /, **kwargs):
        if _importing():
            return self.exec(source, globals_, locals_, **kwargs)
        code = self._code(source, "exec", globals_, locals_)
        return self.exec(code, *_given(globals_, locals_), **kwargs)

    def guarded_compile(self, source, filename, mode, flags=0, dont_inherit=False, optimize=-1, **kwargs):
        if flags & ast.PyCF_ONLY_AST or _importing():  # ast.parse (a tree, not code), or a module's source
            return self.compile(source, filename, mode, flags, dont_inherit, optimize, **kwargs)
        tree = self._tree(source, mode)
        # The shape is checked now; the names when the code is evaluated, in the namespaces given then.
        self._check(tree, (_ANY_NAME,))
        code = self.compile(tree, filename, mode, flags, dont_inherit, optimize, **kwargs)
        self.vetted[id(code)] = (code, tree)
        return code


def _importing() -> bool:
    """Whether the call comes from the import system, running a module's code from the read-only
    filesystem (a scorer importing lazily). An answer's text cannot get there: it can name no import
    function, and no folder on the module path is writable."""
    caller = sys._getframe(2).f_globals.get("__name__", "")
    return caller in ("importlib._bootstrap", "importlib._bootstrap_external")


class _AnyName(dict):
    """A namespace in which every name resolves (to an allowed value): for checking shape only."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: object) -> object:
        return 0


_ANY_NAME = _AnyName()


def _given(globals_: dict | None, locals_: dict | None) -> tuple:
    """The namespaces to evaluate in: those given, else an empty one (never the caller's frame). Every
    name was checked to resolve to an allowed value, so the builtins need no trimming."""
    globals_ = {} if globals_ is None else globals_
    return (globals_,) if locals_ is None else (globals_, locals_)


def _plain_pickle() -> None:
    import io
    import pickle

    class PlainUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> object:
            raise Refused(f"an answer's pickle may hold plain data only, not {module}.{name}")

    def loads(data, /, **kwargs):
        return PlainUnpickler(io.BytesIO(data), **kwargs).load()

    def load(file, **kwargs):
        return PlainUnpickler(file, **kwargs).load()

    pickle.loads, pickle.load, pickle.Unpickler = loads, load, PlainUnpickler


def _plain_yaml() -> None:
    try:
        import yaml
    except ImportError:  # not installed here: nothing can load YAML tags
        return

    def plain_load(stream, *args, **kwargs):
        loader = yaml.SafeLoader(stream)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()

    def plain_load_all(stream, *args, **kwargs):
        return yaml.safe_load_all(stream)

    for name in ("load", "unsafe_load", "full_load"):
        setattr(yaml, name, plain_load)
    for name in ("load_all", "unsafe_load_all", "full_load_all"):
        setattr(yaml, name, plain_load_all)
    for name in ("Loader", "UnsafeLoader", "FullLoader"):
        setattr(yaml, name, yaml.SafeLoader)


def install() -> None:
    """Put the boundary in place for the rest of this process (one answer's scoring process)."""
    _plain_pickle()
    _plain_yaml()
    boundary = _Boundary()
    builtins.eval = boundary.guarded_eval
    builtins.exec = boundary.guarded_exec
    builtins.compile = boundary.guarded_compile
