"""Families aimed at code rewards (``code``): programs that pass tests without solving the task.

(To be filled in: constant_return, fake_success_output, early_exit, raise_skip, read_tests,
empty_function.)
"""
