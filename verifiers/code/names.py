"""Which of the solution's names the tests may see: its entry points, and nothing else.

A test that calls ``poly`` or ``Counter`` means the task's ``poly`` (the prompt's helper) or
the standard library's ``Counter``. Were such a name looked up in the solution, a policy
could define the helper trivially beside a trivial answer and pass. So the tests resolve
every name from trusted code first (the row's set-up and prelude), and take from the
solution only its *entry points*:

1. the names the row declares (``entry_point``: one name or a list), else
2. the names a reference solution in the row (MBPP's ``code``) defines that the tests use, else
3. the names the tests use but never bind that are neither builtins nor what a test means
   by a standard-library name (``Counter``, ``isclose``, ``sqrt``: a task whose function
   is called ``Counter`` or ``sqrt`` declares it).

A name the tests need that none of these provides is a ``NameError`` in the tests, which the
judge reports by name with what to do.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import sys

# What a test means by a name it uses unqualified (having forgotten the import) and a
# solution must never supply: the standard library's value types and containers, the math
# modules, and the helpers tests compare with. Functions a task may well ask for by the
# same name (``count``, ``search``, ``add``) are not listed: such a row's tests could
# never have run without the solution's definition.
_TYPES_FROM = ("collections", "fractions", "decimal", "datetime", "enum", "dataclasses", "numbers", "array", "queue",
               "statistics", "typing")
_ALL_FROM = ("math", "cmath")
_CHECKERS = ("isclose", "approx", "deepcopy", "copy", "reduce", "partial", "namedtuple", "dataclass", "dumps", "loads",
             "fullmatch", "match", "sqrt", "pytest", "raises")


@functools.cache
def stdlib_exports() -> frozenset[str]:
    """Names a test never takes from the solution unless the row declares them (see above)."""
    names: set[str] = {*sys.stdlib_module_names, *_CHECKERS}
    for module_name in (*_TYPES_FROM, *_ALL_FROM):
        module = importlib.import_module(module_name)
        names.update(n for n in dir(module) if not n.startswith("_")
                     and (module_name in _ALL_FROM or isinstance(getattr(module, n), type)))
    return frozenset(names)


def parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def bound_names(tree: ast.AST) -> set[str]:
    """Every name the code binds anywhere (assignments, definitions, imports, parameters…)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return bound


def free_names(tree: ast.AST) -> set[str]:
    """Names the code reads but never binds: what it expects its surroundings to provide."""
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loaded - bound_names(tree)


def module_bindings(tree: ast.Module) -> set[str]:
    """The names a module binds for others (not its functions' parameters and locals)."""
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        names.update(bound_names(node) if isinstance(node, ast.Name | ast.Import | ast.ImportFrom) else ())
        pending.extend(ast.iter_child_nodes(node))
    return names


def top_level_definitions(tree: ast.Module) -> set[str]:
    """What a module defines for others to use: its functions, classes and assigned names."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def declared(value: object) -> tuple[str, ...]:
    """A row's ``entry_point`` field as names: one string, or a list of them."""
    if isinstance(value, str):
        return (value,) if value.isidentifier() else ()
    if isinstance(value, list | tuple):
        return tuple(v for v in value if isinstance(v, str) and v.isidentifier())
    return ()


@functools.lru_cache(maxsize=1024)
def entry_points(tests: str, trusted: tuple[str, ...] = (), names: tuple[str, ...] = (),
                 reference: str | None = None) -> tuple[str, ...]:
    """The solution's names the tests see (see the module's docstring for the order of sources).

    ``trusted`` holds the sources run before the tests (set-up, prelude): a name they bind is
    theirs, never the solution's, unless the row declares it.
    """
    if names:
        return tuple(dict.fromkeys(names))
    tree = parse(tests)
    if tree is None:
        return ()
    wanted = free_names(tree)
    provided = set().union(*(module_bindings(t) for t in map(parse, trusted) if t is not None))
    ref_tree = parse(reference) if reference else None
    if ref_tree is not None:
        return tuple(sorted(wanted & top_level_definitions(ref_tree) - provided))
    return tuple(sorted(n for n in wanted - provided
                        if n not in builtins.__dict__ and n not in stdlib_exports()))


@functools.lru_cache(maxsize=1024)
def standard_modules(tests: str, trusted: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Standard modules the tests use without importing them (``math.isclose`` in an MBPP
    row without ``test_imports``): the judge binds its own import, never the solution's."""
    tree = parse(tests)
    if tree is None:
        return ()
    provided = set().union(*(module_bindings(t) for t in map(parse, trusted) if t is not None))
    return tuple(sorted(n for n in free_names(tree) - provided if n in sys.stdlib_module_names))


@functools.lru_cache(maxsize=1024)
def exported(entry: tuple[str, ...], tests: str) -> tuple[str, ...]:
    """What ``from solution import *`` gives a pytest file: the entry points, but never a builtin
    or a name the test module binds itself (``sorted``, an imported ``isclose``)."""
    tree = parse(tests)
    own = bound_names(tree) if tree is not None else set()
    return tuple(n for n in entry if n not in builtins.__dict__ and n not in own)
