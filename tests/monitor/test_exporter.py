"""The exporter over real HTTP(S): series from start at 0, promtool-clean output, TLS, port in use, snapshot, push."""

from __future__ import annotations

import gzip
import http.client
import json
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import torch
from prometheus_client import CollectorRegistry, generate_latest

import monitor
from monitor.exporter import serve
from monitor.runtime import Monitor
from tests.monitor.conftest import HEADER, Events, bind_applied
from tests.monitor.models import Net

REGIONS = '[[region]]\nname = "blocks"\nmodule = "blocks.*"\n[[region]]\nname = "tail"\nmodule = "tail"\n'


def scrape(url: str, context: ssl.SSLContext | None = None) -> str:
    with urllib.request.urlopen(url, timeout=10, context=context) as resp:
        assert resp.status == 200
        return resp.read().decode()


def promtool_check(text: str) -> subprocess.CompletedProcess:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    return subprocess.run([tool, "check", "metrics"], input=text, text=True, capture_output=True, timeout=30)


def value(text: str, series: str) -> float:
    lines = [line for line in text.splitlines() if line.startswith(series + " ")]
    assert len(lines) == 1, (series, lines)
    return float(lines[0].rsplit(" ", 1)[1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_scrape_on_an_ephemeral_port_shows_every_region_at_zero_then_the_counts(started):
    net = Net()
    _, mon = started(REGIONS + "[monitor]\nport = 0\n", net, serve=True)
    assert mon.port and mon.port > 0
    before = scrape(f"http://127.0.0.1:{mon.port}/metrics")
    for region in ("blocks", "tail"):
        assert value(before, f'torch_compile_compiles_total{{region="{region}"}}') == 0
        assert value(before, f'torch_compile_recompiles_total{{reason="value",region="{region}"}}') == 0
        assert value(before, f'torch_compile_budget_exceeded{{region="{region}"}}') == 0
    with torch.no_grad():
        for _ in range(3):
            net(torch.ones(4, 8))
    after = scrape(f"http://127.0.0.1:{mon.port}/metrics")
    assert value(after, 'torch_compile_compiles_total{region="tail"}') == 3
    assert value(after, 'torch_compile_recompiles_total{reason="value",region="tail"}') == 2
    assert value(after, 'torch_compile_budget_exceeded{region="tail"}') == 1
    assert value(after, 'torch_compile_compile_seconds_count{region="blocks"}') == 3
    assert value(after, 'target_info{local_rank="0",rank="0",world_size="1"}') == 1
    assert 'torch_compile_contract_info{contract="test-net",contract_sha256="' in after
    assert 'job="' not in after and 'instance="' not in after


def test_promtool_check_metrics_passes_on_the_real_output(started):
    net = Net()
    _, mon = started(REGIONS + "[monitor]\nport = 0\n", net, serve=True)
    with torch.no_grad():
        net(torch.ones(4, 8))
        net(torch.ones(4, 8))
    result = promtool_check(scrape(f"http://127.0.0.1:{mon.port}/metrics"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_tls_serves_https_with_a_real_self_signed_certificate(started, tmp_path: Path):
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    _, mon = started(REGIONS + f'[monitor]\nport = 0\ntls_cert = "{cert}"\ntls_key = "{key}"\n', Net(), serve=True)
    body = scrape(f"https://127.0.0.1:{mon.port}/metrics", ssl.create_default_context(cafile=str(cert)))
    assert 'torch_compile_compiles_total{region="tail"} 0.0' in body
    with pytest.raises((OSError, http.client.HTTPException)):
        scrape(f"http://127.0.0.1:{mon.port}/metrics")


def test_a_port_in_use_is_logged_and_counted_and_training_goes_on(started, events):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        net = Net()
        _, mon = started(REGIONS + f"[monitor]\nport = {port}\n", net, serve=True)
        with torch.no_grad():
            net(torch.ones(4, 8))
    assert mon.port is None
    assert mon.ledger.totals()["errors"]["port_in_use"] == 1
    assert events.named("metrics_port_unavailable")[0]["port"] == port
    assert mon.snapshot()["tail"]["compiles"] == 1


def test_each_rank_serves_on_the_base_port_plus_its_local_rank():
    base = free_port() - 1
    server = serve(CollectorRegistry(), addr="127.0.0.1", port=base, local_rank=1)
    try:
        assert server.port == base + 1
    finally:
        server.close()


def test_stop_writes_the_final_textfile_snapshot_and_it_passes_promtool(started, tmp_path: Path):
    net = Net()
    _, mon = started(REGIONS + '[monitor]\nsnapshot_path = "snap/rank{rank}.prom"\n', net)
    with torch.no_grad():
        net(torch.ones(4, 8))
    mon.stop()
    path = tmp_path / "snap" / "rank0.prom"
    text = path.read_text()
    assert 'torch_compile_compiles_total{rank="0",region="tail"} 1.0' in text
    assert promtool_check(text).returncode == 0


def test_an_unreachable_pushgateway_is_counted_and_stop_returns(started):
    _, mon = started(
        REGIONS + f'[monitor]\npushgateway = "http://127.0.0.1:{free_port()}"\npush_timeout_s = 1.0\n', Net()
    )
    mon.stop()
    assert mon.ledger.totals()["errors"]["push"] == 1


@pytest.fixture
def pushgateway(tmp_path: Path):
    """A real Pushgateway (Debian prometheus-pushgateway) on a free loopback port; its URL."""
    tool = shutil.which("prometheus-pushgateway") or shutil.which("pushgateway")
    if tool is None:
        pytest.skip("prometheus-pushgateway is not installed (apt-get install prometheus-pushgateway)")
    port = free_port()
    proc = subprocess.Popen(
        [tool, f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                scrape(f"{url}/-/ready")
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_two_ranks_push_to_a_real_pushgateway_into_their_own_groups(write_contract, pushgateway):
    path = write_contract(HEADER + REGIONS + f'[monitor]\npushgateway = "{pushgateway}"\n')
    for rank in ("0", "1"):
        net = Net()
        mon = Monitor(
            bind_applied(path, net),
            registry=CollectorRegistry(),
            logger=Events(),
            serve=False,
            environ={"RANK": rank, "LOCAL_RANK": rank, "WORLD_SIZE": "2"},
        )
        with torch.no_grad():
            for _ in range(1 + int(rank)):  # rank 1 runs twice: its tail recompiles once more
                net(torch.ones(4, 8))
        mon.stop()
        torch._dynamo.reset()
    text = scrape(f"{pushgateway}/metrics")
    for rank, tail in (("0", 1), ("1", 2)):
        series = (
            f'torch_compile_compiles_total{{contract="test-net",instance="",job="torch_compile_contract",'
            f'rank="{rank}",region="tail"}}'
        )
        assert value(text, series) == tail
    assert promtool_check(text).returncode == 0


def test_a_scrape_that_fails_inside_the_collector_is_counted_not_raised(started):
    _, mon = started(REGIONS + "[monitor]\nport = 0\n", Net(), serve=True)
    mon.ledger.export = None  # a broken ledger read (the one the exporter makes): the endpoint still answers
    try:
        body = scrape(f"http://127.0.0.1:{mon.port}/metrics")
    finally:
        del mon.ledger.export
    assert "torch_compile_compiles_total" not in body
    assert mon.ledger.errors["export"] == 1


PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
    "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"
)
"""The Accept header Prometheus 2.x sends on every scrape."""


def fetch(url: str, headers: dict[str, str]) -> tuple[str, str, bytes]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as resp:
        return resp.headers["Content-Type"], resp.headers.get("Content-Encoding", ""), resp.read()


def test_the_fast_exposition_is_byte_identical_to_prometheus_client_after_real_compiles(started):
    net = Net()
    _, mon = started(REGIONS, net, registry=CollectorRegistry(target_info={"rank": "0"}))
    with torch.no_grad():
        for _ in range(3):
            net(torch.ones(4, 8))
    fast = mon._collector.exposition(mon.registry)
    assert fast == generate_latest(mon.registry)
    assert b'torch_compile_compiles_total{region="tail"} 3.0\n' in fast
    assert promtool_check(fast.decode()).returncode == 0


def test_label_values_with_quotes_backslashes_and_unicode_render_exactly_as_prometheus_client(write_contract):
    name = 'say "hi" \\ région-ü'
    body = '[[region]]\nname = "blocks.a:b-c"\nmodule = "blocks.*"\n[[region]]\nname = "_tail"\nmodule = "tail"\n'
    path = write_contract(f'[contract]\nname = {json.dumps(name)}\n[defaults]\nbackend = "eager"\n' + body)
    registry = CollectorRegistry(target_info={"rank": "0", "host": 'a"b\\c'})
    with monitor.start(bind_applied(path, Net()), registry=registry, logger=Events(), serve=False) as mon:
        fast = mon._collector.exposition(registry)
        assert fast == generate_latest(registry)
    text = fast.decode()
    assert 'torch_compile_contract_info{contract="say \\"hi\\" \\\\ région-ü",' in text
    assert 'torch_compile_compiles_total{region="blocks.a:b-c"} 0.0' in text
    result = promtool_check(text)
    assert result.returncode == 0, result.stdout + result.stderr


def test_prometheus_scrapes_get_the_fast_text_gzip_included_and_openmetrics_only_clients_the_standard_app(started):
    _, mon = started(REGIONS + "[monitor]\nport = 0\n", Net(), serve=True)
    url = f"http://127.0.0.1:{mon.port}/metrics"
    ctype, encoding, raw = fetch(url, {"Accept": PROMETHEUS_ACCEPT, "Accept-Encoding": "gzip"})
    assert ctype == "text/plain; version=0.0.4; charset=utf-8" and encoding == "gzip"
    text = gzip.decompress(raw)
    assert text == generate_latest(mon.registry)
    result = promtool_check(text.decode())
    assert result.returncode == 0, result.stdout + result.stderr
    ctype, _, raw = fetch(url, {"Accept": "application/openmetrics-text;version=1.0.0"})
    assert ctype.startswith("application/openmetrics-text") and raw.rstrip().endswith(b"# EOF")
    assert b'torch_compile_compiles_total{region="tail"} 0' in raw
    _, _, raw = fetch(url + "?name[]=torch_compile_warm", {})
    assert raw.splitlines()[-1] == b"torch_compile_warm 0.0"


def test_every_ledger_export_row_is_as_wide_as_its_named_layout(write_contract) -> None:
    from monitor.ledger import ROW_WIDTH, Ledger

    binding = bind_applied(write_contract(HEADER + REGIONS), Net())
    rows, _ = Ledger(rb.region for rb in binding.regions.values()).export()
    assert len(rows) == 2 and all(len(row) == ROW_WIDTH for row in rows)
