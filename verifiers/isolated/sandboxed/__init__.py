"""The sandboxed scorer's program: the evaluation boundary (:mod:`.guard`) and the job (:mod:`.scorer`).

Standard library only, but for the third-party scorer package a job is sent to run (imported by name
inside the sandbox): :func:`rewardsmith.sandbox.program.program_source` ships their source as one
``python -c`` program. They import each other only relatively, on lines marked ``# sandbox: inlined``.
"""
