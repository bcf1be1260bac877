"""Draw the timeline in a forked child, so matplotlib's import (about a second) and the drawing run on the second
core while this process reads, aggregates and writes the trace.

Only the CLI uses it, and only while its process is single-threaded and has not imported torch (so forking it is
safe). Whatever goes wrong in the child (no fork, a crash, a timeout) falls back to drawing in this process.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading
from typing import Any

from monitor.report.timeline import Plan, Timeline, draw

WAIT_S = 120.0
"""Longest wait for the child's picture before drawing here instead."""


class Drawer:
    """Started before the inputs are read (the child imports matplotlib meanwhile); `submit(plan)` then `result(plan)`
    once; `close()`."""

    def __init__(self) -> None:
        self._conn: Any = None
        self._proc: Any = None
        if "fork" not in multiprocessing.get_all_start_methods() or not _safe_to_fork():
            return
        ctx = multiprocessing.get_context("fork")
        conn, child = ctx.Pipe()
        proc = ctx.Process(target=_child, args=(child,), daemon=True, name="compile-contract-report-timeline")
        try:
            proc.start()
        except OSError:
            conn.close()
            return
        finally:
            child.close()
        self._conn, self._proc = conn, proc

    def submit(self, plan: Plan) -> None:
        """Hand the plan to the child, which draws while this process goes on (`result` collects the picture)."""
        if self._proc is not None:
            try:
                self._conn.send(plan)
            except OSError:
                self.close()

    def result(self, plan: Plan) -> Timeline:
        """The picture of the submitted plan (drawn here when the child is gone); ImportError without matplotlib."""
        if self._proc is not None:
            try:
                if self._conn.poll(WAIT_S):
                    status, value = self._conn.recv()
                    if status == "ok":
                        return value
                    if status == "import":
                        raise ImportError(value)
            except (OSError, EOFError):
                pass
            finally:
                self.close()
        return draw(plan)

    def close(self) -> None:
        """Stop the child (idempotent)."""
        proc, conn, self._proc, self._conn = self._proc, self._conn, None, None
        if conn is not None:
            conn.close()
        if proc is not None:
            if proc.is_alive():
                proc.terminate()
            proc.join(5)


def _safe_to_fork() -> bool:
    """Only a single-threaded process without torch forks (a caller embedding the CLI may have either)."""
    return threading.active_count() == 1 and "torch" not in sys.modules


def _child(conn: Any) -> None:
    """Import matplotlib now, then draw the plan the parent sends; answer ("ok", Timeline), ("import", why) or
    ("error", why)."""
    missing = None
    try:
        import matplotlib.collections
        import matplotlib.figure  # noqa: F401
    except ImportError as exc:
        missing = str(exc)
    try:
        plan = conn.recv()
        conn.send(("import", missing) if missing is not None else ("ok", draw(plan)))
    except EOFError:  # the parent finished without a picture
        pass
    except Exception as exc:
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()
