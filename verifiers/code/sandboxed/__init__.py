"""The code verifier's programs that run inside the sandbox: the judge, the candidate and the wire.

Standard library only: :func:`rewardsmith.verifiers.code.harness.sandbox_source` ships their
source into the sandbox as one ``python3 -c`` program, where no rewardsmith package exists.
They import each other only relatively, on lines marked ``# sandbox: inlined`` (removed there,
the sibling's text standing in front); the host imports them as ordinary modules.
tests/test_layering.py holds them to this.
"""
