"""rewardsmith.adapters: the CLI and the glue to trainers and servers; all call the verifier registry.

By feature: ``cli`` (the command line, on top), ``scoring`` (the offline job), ``trainers`` (TRL,
OpenRLHF, verl), ``serve`` (reward and judge servers), ``reports`` (calibration), ``grpo``, ``audit``;
shared by them: ``on_error``, ``fields``, ``health``.
"""
