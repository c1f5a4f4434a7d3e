"""The ``rewardsmith`` command line: ``main`` is the console script (``rewardsmith.adapters.cli:main``).

``commands`` (the top-level parser and score, calibrate, serve, export, verifiers, sandbox
doctor), ``audit``, ``reward_models`` (label, train orm|prm, eval), ``grpo`` (train grpo) and
``common`` (the error and progress lines they share). The modules import downwards only
(commands > reward_models, audit > grpo > common), and nothing else in ``rewardsmith.adapters``
imports this package (import-linter holds both, see pyproject.toml).
"""

from rewardsmith.adapters.cli.commands import build_parser, main

__all__ = ["build_parser", "main"]
