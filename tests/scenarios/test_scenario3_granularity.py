"""Scenario 3: decoder-level vs layer-level regions with an engine that warms up batch sizes 1..B."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from examples.scenario3_granularity import run


@pytest.mark.parametrize("granularity", ["decoder", "layers"])
def test_engine_warmed_over_batch_sizes_holds_zero_recompiles(granularity: str, quiet_logger) -> None:
    result = run(granularity, backend="eager", max_batch=3, requests=6, logger=quiet_logger)
    assert result.recompiles_after_warm == 0
    assert result.graphs >= 1 and result.graph_breaks == 0 and result.compile_s > 0
    assert any(e["event"] == "monitor_warm" for e in quiet_logger.events)
