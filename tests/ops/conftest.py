"""Fixtures for ops/: the Debian Prometheus tools, skipped with a clear reason where they are not installed."""

from __future__ import annotations

import pytest

from tests.ops.stack import tool


def _need(name: str, package: str) -> str:
    path = tool(name)
    if path is None:
        pytest.skip(f"{name} is not installed (Debian package {package}; CI installs it via scripts/install-system.sh)")
    return path


@pytest.fixture
def promtool() -> str:
    return _need("promtool", "prometheus")


@pytest.fixture
def amtool() -> str:
    return _need("amtool", "prometheus-alertmanager")


@pytest.fixture(scope="session")
def exported_names(tmp_path_factory) -> set[str]:
    """Sample names (with `_bucket`/`_sum`/`_count`) a real monitor exposes for a real bound model."""
    import torch
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    import monitor
    from contract.binding.apply import apply
    from contract.pipeline import check

    path = tmp_path_factory.mktemp("names") / "contract.toml"
    path.write_text(
        '[contract]\nname = "names"\n[defaults]\nbackend = "eager"\n[[region]]\nname = "lin"\nmodule = "lin"\n'
    )
    model = torch.nn.Sequential()
    model.add_module("lin", torch.nn.Linear(4, 4))
    _, binding, findings = check(path, model)
    assert binding is not None, findings
    registry = CollectorRegistry(target_info={"rank": "0", "local_rank": "0", "world_size": "1"})
    with monitor.start(apply(binding), registry=registry, serve=False):
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))  # an unclaimed compile: its families' samples
        text = generate_latest(registry).decode()
    return {s.name for fam in text_string_to_metric_families(text) for s in fam.samples}
