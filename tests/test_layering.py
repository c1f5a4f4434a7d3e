"""The layering, held by a tool: import-linter's contracts in pyproject.toml (item 15).

sandbox <- verifiers <- reward_models <- adapters, never backwards, and rewardsmith.verifiers
(imported by every trainer worker and the reward server) free of torch, transformers, docker,
fastapi and numpy, at module level or inside functions. Inside rewardsmith.verifiers (issue 25)
the families math, code, judge and calibration do not import each other, and the programs
shipped into the sandbox as source (verifiers/code/sandboxed/) import the standard library and
each other only: the contract says so for rewardsmith and known packages, a test here for all;
the sandboxed scorer (verifiers/isolated/sandboxed/) too, but for the scorer packages it runs.
Within adapters, the CLI is the top (nothing else imports rewardsmith.adapters.cli) and its
modules import each other downwards only.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys

import pytest
from conftest import REPO


def test_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("import-linter is not installed: pip install -e '.[dev]'")
    result = subprocess.run([exe, "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "10 kept, 0 broken" in result.stdout


SANDBOXED = REPO / "verifiers" / "code" / "sandboxed"


def _guarded_by_import_error(tree: ast.Module, node: ast.stmt) -> bool:
    """Whether ``node`` sits directly in the body of a ``try`` that handles ImportError."""
    for t in ast.walk(tree):
        if isinstance(t, ast.Try) and node in t.body:
            for handler in t.handlers:
                caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if any(isinstance(c, ast.Name) and c.id in ("ImportError", "ModuleNotFoundError") for c in caught):
                    return True
    return False


def test_the_sandboxed_programs_import_only_the_standard_library_and_each_other():
    """What sandbox_source ships runs in the sandbox's bare python3: an import of anything else
    (rewardsmith, a third-party package), at module level or in a function, would fail there,
    perhaps only on a rare path. Every import in every module of verifiers/code/sandboxed/ names a
    standard-library module or (relatively, as sandbox_source requires) a sibling."""
    siblings = {path.stem for path in SANDBOXED.glob("*.py")}
    assert {"wire", "judge", "candidate"} <= siblings
    bad, optional = [], []
    for path in sorted(SANDBOXED.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level != 1 or (node.module or "").split(".")[0] not in siblings:
                    bad.append(f"{path.name}:{node.lineno}: from {'.' * node.level}{node.module or ''}")
                continue
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                tops = [(node.module or "").split(".")[0]]
            else:
                continue
            for top in tops:
                if top in sys.stdlib_module_names:
                    continue
                # The one exception: the judge runs a pytest file with the sandbox image's pytest,
                # so it imports pytest, inside run_pytest, where a missing pytest is a sandbox error.
                if (path.name, top) == ("judge.py", "pytest") and _guarded_by_import_error(tree, node):
                    optional.append(f"{path.name}:{node.lineno}")
                    continue
                bad.append(f"{path.name}:{node.lineno}: {top}")
    assert bad == [], "sandboxed modules import beyond the standard library and each other: " + ", ".join(bad)
    assert len(optional) == 1, optional  # exactly that one pytest import, guarded


def test_importing_and_building_light_verifiers_loads_no_heavy_module():
    """What the contract is for, checked at run time: a trainer worker importing the registry and
    building a math/format/route reward pays for none of these."""
    code = (
        "import sys\n"
        "from rewardsmith.verifiers import build\n"
        "build({'type': 'route', 'routes': {'a': 'math', 'b': {'type': 'gate', 'when': 'format', 'then': 'math'}}})\n"
        "heavy = [m for m in ('torch', 'transformers', 'docker', 'fastapi', 'numpy') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_the_sandboxed_scorer_imports_the_standard_library_and_its_scorer_packages_only():
    """verifiers/isolated/sandboxed/ runs in the sandbox's Python, where only the standard library and
    the scorer packages of sandbox/image/scorers.txt exist: those are imported inside functions (a
    missing one is the job's "missing" report), everything else at module level is the standard library."""
    folder = REPO / "verifiers" / "isolated" / "sandboxed"
    siblings = {path.stem for path in folder.glob("*.py")}
    assert {"guard", "scorer"} <= siblings
    scorer_packages = {"reasoning_gym", "yaml"}  # reasoning-gym's, and the YAML loader the guard closes
    bad = []
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = set(map(id, tree.body))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                if node.level != 1 or (node.module or "").split(".")[0] not in siblings:
                    bad.append(f"{path.name}:{node.lineno}")
                continue
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                tops = [(node.module or "").split(".")[0]]
            else:
                continue
            for top in tops:
                if top in sys.stdlib_module_names or (top in scorer_packages and id(node) not in top_level):
                    continue
                bad.append(f"{path.name}:{node.lineno}: {top}")
    assert bad == []
