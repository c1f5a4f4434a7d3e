"""The offline scoring job behind ``rewardsmith score``, and the row reader the other commands share.

``job`` (the backend-neutral job: read, resume, score, write, report), ``rows`` (every input format
in, bad lines kept with their numbers), ``outputs`` (every output format out, atomically),
``provenance`` (which job wrote an output, checked before a resume), ``ray`` (the same job on
Ray actors). Importing this package imports none of them.
"""
