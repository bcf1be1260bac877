"""`compile-contract upgrade`: what a candidate torch changes for this model, region by region.

The parent (the CLI, under the installed torch) validates the candidate interpreter (`interpreter`), then runs the
hidden worker (`worker`) once under each torch in a subprocess with the caller's environment: the checker's findings,
a monitored run of the step (`contract.init.record`) and the step's outputs. `compare` folds the two results into
one report of records, `drift` compares the outputs, `render` writes text, markdown, JSON or SARIF.
Nothing here imports torch at import time: a bad candidate is reported before anything heavy loads.
"""

from __future__ import annotations


class BadInput(Exception):
    """The command cannot run as asked (a missing or broken candidate, a contract without a step): one line, exit 2."""
