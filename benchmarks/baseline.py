"""Another git ref's rewardsmith beside this checkout's, for benchmarks that compare before and after.

``baseline_tree(REF)`` extracts the four packages of REF into a temporary folder importable as
``rewardsmith`` (a symlink tree, as a checkout's editable install maps them); a subprocess started with
``env_with(that folder)`` imports them instead of this checkout's (``check_imports_from`` makes sure).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("adapters", "reward_models", "sandbox", "verifiers")  # rewardsmith.<folder>


@contextlib.contextmanager
def baseline_tree(ref: str) -> Iterator[Path]:
    """The packages of git ref ``ref`` in a temporary folder, importable as ``rewardsmith`` from the
    path yielded (a symlink tree, as a checkout's editable install maps them); removed at exit."""
    tmp = Path(tempfile.mkdtemp(prefix="rewardsmith-baseline-"))
    try:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", ref, *PACKAGES],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            raise SystemExit(f"--baseline {ref}: git archive failed: {archive.stderr.decode().strip()}")
        (tmp / "src").mkdir()
        subprocess.run(["tar", "-x", "-C", str(tmp / "src")], input=archive.stdout, check=True)
        package = tmp / "pkg" / "rewardsmith"
        package.mkdir(parents=True)
        for name in PACKAGES:
            (package / name).symlink_to(tmp / "src" / name)
        yield tmp / "pkg"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def env_with(path: Path | None) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def check_imports_from(env: dict[str, str], where: Path) -> None:
    found = subprocess.run([sys.executable, "-c", "import rewardsmith.adapters as a; print(a.__path__[0])"],
                           env=env, capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).is_relative_to(where):
        raise SystemExit(f"the baseline imports rewardsmith from {found}, not from {where}; is another "
                         "rewardsmith earlier on sys.path?")
