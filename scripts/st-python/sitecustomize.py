"""Loaded by scripts/schemathesis (PYTHONPATH) into Schemathesis' interpreter.

CPython 3.11 before 3.11.8 keeps the AST constructor's recursion depth in state shared by all
threads, so two threads in `ast.parse` at once can fail with "SystemError: AST constructor
recursion depth mismatch" (python/cpython#106905). Schemathesis runs `--workers 2` as threads and
Hypothesis parses lambdas' source to name its filters: CI failed once on exactly that, on a test
case that had passed. One parse at a time removes the race; parsing is a negligible part of a run.
"""
import ast
import threading

_lock = threading.RLock()
_parse = ast.parse


def _parse_one_at_a_time(*args, **kwargs):
    with _lock:
        return _parse(*args, **kwargs)


ast.parse = _parse_one_at_a_time
