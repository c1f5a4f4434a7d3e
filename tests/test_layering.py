"""The layering, held by a tool: import-linter's contracts in pyproject.toml (item 15).

sandbox <- verifiers <- reward_models <- adapters, never backwards, and rewardsmith.verifiers
(imported by every trainer worker and the reward server) free of torch, transformers, docker,
fastapi and numpy, at module level or inside functions. Within adapters, the CLI is the top
(nothing else imports rewardsmith.adapters.cli) and its modules import each other downwards only.
"""

from __future__ import annotations

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
    assert "4 kept, 0 broken" in result.stdout


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
