"""The ``rewardsmith`` command line: ``main`` is the console script (``rewardsmith.adapters.cli:main``).

``main`` (the top-level parser and score, calibrate, serve, export, verifiers, sandbox doctor;
``audit`` comes from :mod:`rewardsmith.adapters.audit.cli`), ``reward_models`` (label, train orm|prm,
eval), ``grpo`` (train grpo) and ``common`` (the error and progress lines they share). The modules
import downwards only (main > reward_models > grpo > common), and nothing else in
``rewardsmith.adapters`` imports this package (import-linter holds both, see pyproject.toml).

Note that ``rewardsmith.adapters.cli.main`` read as an attribute is the function below, not the
module of the same name: import the module's names with ``from rewardsmith.adapters.cli.main import ...``.
"""

from rewardsmith.adapters.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
