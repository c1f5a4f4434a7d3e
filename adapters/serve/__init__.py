"""The two HTTP servers: ``reward_server`` (``rewardsmith serve``: OpenRLHF's ``/get_reward``, the
native ``/v1/score``, ``/health`` and ``/metrics``) and ``judge_server`` (a local model behind the
OpenAI chat protocol, ``python -m rewardsmith.adapters.serve.judge_server``), and ``auth`` (the
reward server's bearer token). The servers import uvicorn (and the judge server fastapi); importing
this package imports neither.
"""
