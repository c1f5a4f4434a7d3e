"""The registry's table of built-ins against the package layout (issue 25): a built-in name leads,
in one hop, to the module that defines its factory.

For every entry of ``BUILTINS``: the module imports, importing it (in a fresh interpreter, where
nothing registered the name before) registers the name, and the registered factory's
``__module__`` is exactly that module. And the names there are are the ones documented: what
``available()`` and ``rewardsmith verifiers`` list is the documented set (docs/reward-specs.md), no more, no less.
"""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO

from rewardsmith.verifiers.registry import BUILTINS, ENTRY_POINT_GROUP, get_factory

# The verifier table of docs/reward-specs.md and the "Serving: `orm` and `prm`" section of
# docs/reward-models.md.
DOCUMENTED = {"math", "code", "brier", "judge", "cascade", "ifeval", "format", "json", "overlong", "cosine",
              "repetition", "weighted", "min", "max", "gate", "route", "orm", "prm", "tool_call", "choice", "qa",
              "reasoning_gym", "agent"}


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=180, cwd=REPO)


@pytest.mark.parametrize("module", sorted(set(BUILTINS.values())))
def test_importing_a_builtin_module_registers_its_names_from_that_module(module):
    names = sorted(name for name, home in BUILTINS.items() if home == module)
    result = _fresh(f"""
        import importlib, json
        from rewardsmith.verifiers import registry
        before = sorted(n for n in {names!r} if n in registry._REGISTRY)
        importlib.import_module("rewardsmith.verifiers.{module}")
        homes = {{n: getattr(registry._REGISTRY.get(n), "__module__", None) for n in {names!r}}}
        print(json.dumps({{"before": before, "homes": homes}}))
    """)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["before"] == []
    assert report["homes"] == {name: f"rewardsmith.verifiers.{module}" for name in names}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_a_builtin_factory_is_defined_in_the_module_the_table_names(name):
    factory = get_factory(name)
    module = importlib.import_module(f"rewardsmith.verifiers.{BUILTINS[name]}")
    assert factory.__module__ == module.__name__
    assert getattr(module, factory.__qualname__) is factory


def _plugins() -> set[str]:
    from importlib.metadata import entry_points

    return {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}


def test_the_documented_verifiers_are_the_docs_s():
    specs = (REPO / "docs" / "reward-specs.md").read_text(encoding="utf-8")
    tables = re.findall(r"^\| type \| what \| options \|\n\| --- \| --- \| --- \|\n((?:\|.*\n)+)", specs, re.M)
    in_tables = {name for table in tables for row in table.splitlines()
                 for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert "## Serving: `orm` and `prm` verifiers" in (REPO / "docs" / "reward-models.md").read_text(encoding="utf-8")
    assert in_tables | {"orm", "prm"} == DOCUMENTED


def test_available_and_the_cli_list_exactly_the_documented_verifiers():
    result = _fresh("""
        import contextlib, io, json
        from rewardsmith.verifiers import available
        names = available()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            from rewardsmith.adapters.cli import main
            code = main(["verifiers"])
        print(json.dumps({"available": names, "code": code, "cli": out.getvalue()}))
    """)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    plugins = _plugins()
    assert set(report["available"]) - plugins == DOCUMENTED == set(BUILTINS)
    assert report["code"] == 0
    listed = [line.split()[0] for line in report["cli"].splitlines() if line and not line.startswith("`")]
    assert set(listed) - plugins == DOCUMENTED and len(listed) == len(set(listed))
