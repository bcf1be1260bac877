"""The Grafana dashboard's queries as plain PromQL: Grafana variables replaced by concrete values."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tests.ops.stack import OPS

DASHBOARD = OPS / "grafana" / "torch-compile.json"
RATE_WINDOW = "1m"
"""What `$__rate_interval` becomes outside Grafana (the tests scrape every second, so a minute holds many samples)."""


@dataclass(frozen=True, kw_only=True)
class Query:
    """One panel target."""

    panel: str
    """Panel title."""
    ref: str
    """Target refId."""
    expr: str
    """PromQL with Grafana variables."""


def load() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text())


def panels(dash: dict[str, Any]) -> list[dict[str, Any]]:
    """Every non-row panel, including panels nested in collapsed rows."""
    out: list[dict[str, Any]] = []
    for p in dash["panels"]:
        if p["type"] == "row":
            out.extend(p.get("panels", []))
        else:
            out.append(p)
    return out


def queries(dash: dict[str, Any]) -> list[Query]:
    return [Query(panel=p["title"], ref=t["refId"], expr=t["expr"]) for p in panels(dash) for t in p["targets"]]


def render(expr: str, *, job: str = ".*", region: str = ".*", rank: str = ".*") -> str:
    """Grafana's substitution for a regex-matched multi-value variable (`=~"$var"`), and the rate window."""
    out = expr.replace("$__rate_interval", RATE_WINDOW)
    for name, value in (("job", job), ("region", region), ("rank", rank)):
        out = out.replace(f"${{{name}}}", value).replace(f"${name}", value)
    assert "$" not in out, f"unreplaced Grafana variable in {out}"
    return out


_LABEL_VALUES = re.compile(r"^label_values\((?P<selector>.+),\s*(?P<label>\w+)\)$")


def variable_probe(query: str, **values: str) -> tuple[str, str]:
    """`label_values(SELECTOR, LABEL)` -> (a PromQL query returning one series per value, LABEL)."""
    m = _LABEL_VALUES.match(query.strip())
    assert m, f"variable query is not label_values(selector, label): {query}"
    return f"count by ({m['label']}) ({render(m['selector'], **values)})", m["label"]
