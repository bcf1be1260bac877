"""pytest plugin (entry point `pytest11`): assert in a user's own test suite that a model honours its compile contract.

    @pytest.mark.compile_contract("contracts/model.toml")
    def test_serving_stays_within_budget(compile_contract):
        model = build_model()
        mon = compile_contract(model)      # enforce() the contract, start a monitor for this test
        warm_up(model); mon.mark_warm()
        serve_traffic(model)               # a budget breach fails the test, naming the region and the reasons

The contract path comes from the argument, else the `compile_contract` marker, else `--compile-contract PATH`.
Relative marker paths resolve against pytest's rootdir, the option's against the invocation directory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MARKER = "compile_contract"
OPTION = "--compile-contract"


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--compile-contract PATH`: the default contract for the `compile_contract` fixture."""
    group = parser.getgroup("compile-contract", "torch-compile-contract")
    group.addoption(
        OPTION,
        dest="compile_contract",
        metavar="PATH",
        default=None,
        help="contract TOML used by the compile_contract fixture when a test has no marker",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker so `--strict-markers` suites accept it."""
    config.addinivalue_line("markers", f"{MARKER}(path): the compile contract the compile_contract fixture enforces")


@dataclass(kw_only=True)
class ContractGuard:
    """Enforces contracts on models for one test and owns their monitors; verify() fails on any breach."""

    default_path: Path | None
    """Contract from the marker or the option (None: each call must pass one)."""
    monitors: list[Any] = field(default_factory=list)
    """Monitors started in this test, stopped at teardown."""
    expected: set[str] = field(default_factory=set)
    """Regions the test expects to breach (it tests the breach handling itself)."""

    def __call__(
        self,
        model: Any,
        path: str | Path | None = None,
        *,
        step: Callable | None = None,
        strict: bool = False,
        manual_warmup: bool = False,
        fresh: bool = True,
    ) -> Any:
        """Check and apply the contract to `model` (refusing on errors) and start a monitor; returns its handle.

        `fresh` empties Dynamo's cache first: entries compiled by earlier tests for the same classes would
        otherwise serve this test's calls, and its counts would depend on test order.
        """
        import torch
        from prometheus_client import CollectorRegistry

        import monitor
        from contract.document.load import ContractFileError
        from contract.pipeline import ContractViolation, enforce

        where = Path(path) if path is not None else self.default_path
        if where is None:
            pytest.fail(
                f"compile_contract: no contract; add @pytest.mark.{MARKER}(path) or pass {OPTION} PATH", pytrace=False
            )
        if fresh and not self.monitors:
            torch.compiler.reset()
        try:
            binding, refusal = enforce(model, where, step=step, strict=strict), None
        except ContractViolation as exc:
            refusal = f"compile_contract: the model does not pass its contract\n{exc}"
        except ContractFileError as exc:
            refusal = f"compile_contract: {exc}"
        if refusal is not None:  # failed outside the except block: no chained traceback in the report
            pytest.fail(refusal, pytrace=False)
        mon = monitor.start(binding, registry=CollectorRegistry(), serve=False, manual_warmup=manual_warmup)
        self.monitors.append(mon)
        return mon

    def expect_breach(self, *regions: str) -> None:
        """Declare that these regions must exceed a budget in this test (the test checks the breach action)."""
        self.expected.update(regions)

    def breaches(self) -> dict[str, str]:
        """Region -> one line with its counts and last guard-failure reasons, for each region over budget."""
        return {
            name: _describe(name, s) for mon in self.monitors for name, s in mon.snapshot().items() if s["breached"]
        }

    def verify(self) -> None:
        """Fail the running test when a region exceeded its budgets unexpectedly, or an expected breach is missing."""
        found = self.breaches()
        lines = [line for name, line in found.items() if name not in self.expected]
        if lines:
            pytest.fail("compile contract exceeded:\n" + "\n".join(lines), pytrace=False)
        missing = sorted(self.expected - set(found))
        if missing:
            pytest.fail(
                f"compile contract: expected a budget breach in {', '.join(map(repr, missing))}, "
                "but the region stayed within its budgets",
                pytrace=False,
            )

    def close(self) -> None:
        """Stop every monitor (unhooks Dynamo callbacks; writes configured snapshots)."""
        while self.monitors:
            self.monitors.pop().stop()


def _describe(region: str, s: dict[str, Any]) -> str:
    """`region 'x': recompile budget exceeded (3 > 0) ...; last reasons: ...`."""
    parts = []
    if "recompile_budget" in s["breaches"]:
        parts.append(
            f"recompile budget exceeded ({s['budget_recompiles']} recompiles after warm-up > {s['recompile_budget']})"
        )
    if "graph_break_budget" in s["breaches"]:
        parts.append(
            f"graph break budget exceeded (a compile broke the graph more than {s['graph_break_budget']} "
            f"times; {s['graph_breaks']} graph breaks in all)"
        )
    if "unclaimed_compile_budget" in s["breaches"]:
        parts.append(
            f"unclaimed compile budget exceeded ({s['compiles']} compiles outside every region > "
            f"{s['unclaimed_compile_budget']})"
        )
    reasons = "; ".join(s["last_reasons"][-3:]) or "none recorded"
    return f"  region {region!r}: {', '.join(parts)}; compiles={s['compiles']}; last reasons: {reasons}"


def _default_path(request: pytest.FixtureRequest) -> Path | None:
    """Marker argument (relative to rootdir), else the command-line option (relative to the invocation dir)."""
    config = request.config
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None:
        if not marker.args and "path" not in marker.kwargs:
            pytest.fail(
                f"@pytest.mark.{MARKER} needs the contract path: @pytest.mark.{MARKER}('model.toml')", pytrace=False
            )
        return config.rootpath / Path(marker.kwargs.get("path", marker.args[0] if marker.args else ""))
    option = config.getoption("compile_contract")
    return config.invocation_params.dir / Path(option) if option else None


@pytest.fixture
def compile_contract(request: pytest.FixtureRequest):
    """Callable `compile_contract(model, path=None)`: enforce the contract, monitor the test, fail it on a breach."""
    guard = ContractGuard(default_path=_default_path(request))
    yield guard
    guard.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """After a test body that passed, fail it when a region it ran exceeded its budget."""
    result = yield
    guard = getattr(item, "funcargs", {}).get("compile_contract")
    if isinstance(guard, ContractGuard):
        guard.verify()
    return result
