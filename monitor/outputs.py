"""Where the monitor's ledger leaves the process: the metrics endpoint, and the final snapshot / push at exit or
SIGTERM. Failures here never reach the user's step: they are logged and counted in the ledger's error series."""

from __future__ import annotations

import os
from collections.abc import Callable

from prometheus_client import CollectorRegistry

from contract.document.load import Contract
from monitor.exporter import LedgerCollector, Server, push, serve, write_snapshot
from monitor.ledger import Ledger
from monitor.sigterm import SigtermExport

SIGTERM_EXPORT_S = 5.0
"""Longest wait for the final snapshot when SIGTERM arrives (plus the push timeout when pushing)."""


class Outputs:
    """The endpoint and the final export of one monitor (`say` logs an event, `on_error` counts a fault)."""

    def __init__(
        self,
        contract: Contract,
        registry: CollectorRegistry,
        env: dict[str, str],
        *,
        say: Callable[..., None],
        on_error: Callable[[str, BaseException], None],
    ) -> None:
        self.contract, self.spec, self.registry, self.env = contract, contract.monitor, registry, env
        self._say, self._error = say, on_error
        self._owner_pid = os.getpid()
        """The process that started the monitor: a forked child (DataLoader worker) never exports."""

    def serve(self, collector: LedgerCollector, ledger: Ledger) -> Server | None:
        """Bind `[monitor] port` (+ local rank); a port in use is logged and counted, never raised."""
        spec = self.spec
        if spec.port is None:
            return None
        cert = str(self.contract.resolve_path(spec.tls_cert)) if spec.tls_cert else None
        key = str(self.contract.resolve_path(spec.tls_key)) if spec.tls_key else None
        local_rank = int(self.env["local_rank"]) if self.env["local_rank"].isdigit() else 0
        try:
            return serve(
                self.registry,
                addr=spec.addr,
                port=spec.port,
                local_rank=local_rank,
                certfile=cert,
                keyfile=key,
                collector=collector,
            )
        except OSError as exc:
            ledger.error("port_in_use")
            self._say(
                "error",
                "metrics_port_unavailable",
                addr=spec.addr,
                port=spec.port + local_rank if spec.port else 0,
                error=exc.strerror or str(exc),
                effect="training goes on without a metrics endpoint",
            )
            return None

    def install_sigterm(self, before: Callable[[], None] | None = None, events: bool = False) -> SigtermExport | None:
        """Final snapshot/push on SIGTERM too (the default action skips atexit); only when there is one to write or
        an event file (`events`) to tell. `before` runs first (the event naming a compile the signal interrupted)."""
        spec = self.spec
        if not (spec.snapshot_path or spec.pushgateway or events):
            return None
        timeout = SIGTERM_EXPORT_S + (spec.push_timeout_s if spec.pushgateway else 0.0)

        def export() -> None:
            if before is not None:
                before()
            self.final()

        handler = SigtermExport(export, timeout, on_error=lambda exc: self._error("snapshot", exc))
        try:
            return handler if handler.install() else None
        except Exception as exc:  # a platform without SIGTERM: atexit still writes it
            self._error("snapshot", exc)
            return None

    def final(self) -> None:
        """Final snapshot and push; never from a forked child (its inherited SIGTERM handler or atexit)."""
        spec = self.spec
        if os.getpid() != self._owner_pid:
            return
        if spec.snapshot_path:
            try:
                path = write_snapshot(
                    self.registry, str(self.contract.resolve_path(spec.snapshot_path)), self.env["rank"]
                )
                self._say("info", "metrics_snapshot_written", path=path)
            except Exception as exc:
                self._error("snapshot", exc)
        if spec.pushgateway:
            try:
                push(
                    self.registry,
                    spec.pushgateway,
                    contract=self.contract.name,
                    rank=self.env["rank"],
                    timeout=spec.push_timeout_s,
                )
            except Exception as exc:
                self._error("push", exc)
