"""Final export on SIGTERM: with Python's default SIGTERM action the process dies without running atexit."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any


class SigtermExport:
    """Runs `export` (bounded in time, never raising) when SIGTERM arrives, then lets the signal take its course.

    Installed only from the main thread (Python's rule for signal handlers). Previous disposition:
    default -> after the export it is restored and the signal re-delivered, so the process still dies "killed by
    SIGTERM"; a user handler -> chained to after the export; ignored -> nothing is installed. The export runs in a
    helper thread joined with a timeout: the signal can land while the interrupted code holds a lock the export
    needs (the ledger's), and a hung push must not keep a terminated job alive.
    """

    def __init__(
        self, export: Callable[[], None], timeout_s: float, on_error: Callable[[BaseException], None] | None = None
    ) -> None:
        self._export, self._timeout_s, self._on_error = export, timeout_s, on_error
        self._previous: Any = None
        self._installed = False

    def install(self) -> bool:
        """Install the handler when possible (main thread, SIGTERM not ignored); True when installed."""
        if threading.current_thread() is not threading.main_thread():
            return False
        previous = signal.getsignal(signal.SIGTERM)
        if previous in (signal.SIG_IGN, None):  # ignored, or set from C: leave it alone
            return False
        signal.signal(signal.SIGTERM, self._handle)
        self._previous, self._installed = previous, True
        return True

    def uninstall(self) -> None:
        """Put the previous handler back if ours is still the installed one (never raises)."""
        if not self._installed:
            return
        self._installed = False
        try:
            if signal.getsignal(signal.SIGTERM) == self._handle:
                signal.signal(signal.SIGTERM, self._previous)
        except (ValueError, OSError):  # not the main thread: the interpreter is going down anyway
            pass

    def _handle(self, signum: int, frame: Any) -> None:
        self._run_export()
        previous = self._previous
        if callable(previous):
            previous(signum, frame)
            return
        self.uninstall()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    def _run_export(self) -> None:
        """The export in a helper thread, waited for at most `timeout_s`; any failure goes to on_error."""

        def run() -> None:
            try:
                self._export()
            except Exception as exc:
                if self._on_error is not None:
                    self._on_error(exc)

        try:
            helper = threading.Thread(target=run, name="monitor-sigterm-export", daemon=True)
            helper.start()
            helper.join(self._timeout_s)
        except Exception as exc:  # cannot start a thread (interpreter shutting down): the signal still proceeds
            if self._on_error is not None:
                self._on_error(exc)
