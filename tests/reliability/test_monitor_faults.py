"""Real faults around a running monitor: training never stops because of us, each fault is counted and logged once,
counts stay exact and the final snapshot is still written. Run with `-s` for the totals of faults, threads, compiles."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
import torch
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

import monitor
from compile_formats.reasons import CATEGORIES
from tests import ROOT
from tests.reliability._faults import Adder, Block, Events, Tower, bind, regions, retained_bytes

TALLY: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_tally():
    """Print how many faults, threads and compiles the module drove (visible with `pytest -s`)."""
    yield
    print("\nmonitor faults: " + json.dumps(dict(sorted(TALLY.items()))))


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test starts from an empty Dynamo cache (class code objects are shared between tests)."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def start(tmp_path: Path, events: Events):
    """bind + apply + monitor.start (no server unless asked); every monitor is stopped at the end."""
    mons: list[monitor.Monitor] = []

    def make(body: str, model: torch.nn.Module, **kw):
        binding = bind(tmp_path / "c.toml", body, model)
        kw.setdefault("registry", CollectorRegistry())
        kw.setdefault("serve", False)
        mon = monitor.start(binding, logger=kw.pop("logger", events), **kw)
        mons.append(mon)
        return mon

    yield make
    for mon in mons:
        mon.stop()


def sizes(model: torch.nn.Module, batch_sizes, dim: int = 8) -> list[torch.Tensor]:
    """Run the model once per batch size (dynamic = false: each new size compiles every region once more)."""
    with torch.no_grad():
        return [model(torch.ones(b, dim)) for b in batch_sizes]


def eager_reference(n: int, batch_sizes) -> list[torch.Tensor]:
    return sizes(Tower(n), batch_sizes)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- faults inside our own code -------------------------------------------------------------------------------


def failing_clock() -> float:
    """An injected clock whose source is gone: a fault inside our start hook on every compile."""
    raise OSError("clock source gone")


def test_an_exception_inside_our_hooks_never_reaches_the_step_is_counted_each_time_and_logged_once(start, events):
    model = Tower(3)
    mon = start(regions(3), model, clock=failing_clock)
    outs = sizes(model, [1, 2, 3, 4])
    TALLY["faults_injected"] += 12
    assert all(torch.equal(a, b) for a, b in zip(outs, eager_reference(3, [1, 2, 3, 4]), strict=True))
    snap = mon.snapshot()
    assert [snap[f"b{i}"]["compiles"] for i in range(3)] == [4, 4, 4]
    assert [snap[f"b{i}"]["recompiles"] for i in range(3)] == [3, 3, 3]
    assert mon.ledger.totals()["errors"]["hook"] == 12
    assert [e["kind"] for e in events.named("monitor_error")] == ["hook"]
    TALLY["compiles"] += 12


class DyingLogger(Events):
    """Records events until the log collector goes away, then raises on every call."""

    dead = False

    def __getattr__(self, level):
        log = super().__getattr__(level)

        def call(event, **kw):
            if self.dead:
                raise BrokenPipeError("log collector gone")
            log(event, **kw)

        return call


def test_a_logger_that_dies_mid_run_costs_neither_the_step_nor_a_count(start):
    logger = DyingLogger()
    model = Tower(2)
    mon = start(regions(2), model, logger=logger)
    sizes(model, [1])
    logger.dead = True
    sizes(model, [2, 3])
    TALLY["faults_injected"] += 4
    snap = mon.snapshot()
    assert [(snap[r]["compiles"], snap[r]["recompiles"]) for r in ("b0", "b1")] == [(3, 2), (3, 2)]
    assert mon.ledger.totals()["errors"]["hook"] == 4
    logger.dead = False
    TALLY["compiles"] += 6


def test_stop_returns_even_when_the_logger_is_dead(start):
    logger = DyingLogger()
    mon = start(regions(1), Tower(1), logger=logger)
    logger.dead = True
    try:
        mon.stop()
    finally:
        logger.dead = False
    assert mon._stopped and mon.ledger.totals()["errors"]["export"] == 1


def test_start_survives_a_logger_that_is_dead_from_the_beginning(start):
    logger = DyingLogger()
    logger.dead = True
    model = Tower(1)
    try:
        mon = start(regions(1), model, logger=logger)
        sizes(model, [1, 2])
    finally:
        logger.dead = False
    assert [mon.snapshot()["b0"][k] for k in ("compiles", "recompiles")] == [2, 1]
    assert mon.ledger.totals()["errors"]["export"] == 1 and mon.ledger.totals()["errors"]["hook"] == 2


def test_dynamo_reset_mid_run_keeps_counting_and_a_compile_after_it_is_not_a_recompile(start, events):
    model = Tower(2)
    mon = start(regions(2), model)
    for _ in range(3):
        sizes(model, [1, 2])
        torch._dynamo.reset()
        TALLY["faults_injected"] += 1
    sizes(model, [1, 2, 3])
    snap = mon.snapshot()
    assert [snap[r]["compiles"] for r in ("b0", "b1")] == [9, 9]
    assert [snap[r]["recompiles"] for r in ("b0", "b1")] == [5, 5]
    assert len(events.named("dynamo_reset_seen")) == 3
    assert mon.ledger.totals()["errors"] == dict.fromkeys(mon.ledger.totals()["errors"], 0)
    TALLY["compiles"] += 18


# ---- faults around the exporter ---------------------------------------------------------------------------------


def test_a_metrics_port_held_by_another_process_is_counted_once_and_training_goes_on(start, events):
    port = free_port()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import socket, sys, time\ns = socket.socket()\n"
            f"s.bind(('127.0.0.1', {port})); s.listen(1); print('up', flush=True); time.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "up"
        model = Tower(1)
        mon = start(regions(1) + f"[monitor]\nport = {port}\n", model, serve=True)
        sizes(model, [1, 2])
    finally:
        holder.kill()
        holder.wait()
    TALLY["faults_injected"] += 1
    assert mon.port is None and mon.snapshot()["b0"]["compiles"] == 2
    assert mon.ledger.totals()["errors"]["port_in_use"] == 1
    assert len(events.named("metrics_port_unavailable")) == 1
    TALLY["compiles"] += 2


def test_a_pushgateway_that_accepts_but_never_answers_times_out_and_the_snapshot_is_still_written(
    start, events, tmp_path: Path
):
    with socket.socket() as blackhole:
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(8)  # the kernel completes the handshake; nobody ever reads or answers
        url = f"http://127.0.0.1:{blackhole.getsockname()[1]}"
        model = Tower(1)
        mon = start(
            regions(1) + f'[monitor]\npushgateway = "{url}"\npush_timeout_s = 0.3\n'
            'snapshot_path = "final/rank{rank}.prom"\n',
            model,
        )
        sizes(model, [1])
        mon.stop()
        mon.stop()
    TALLY["faults_injected"] += 1
    assert mon.ledger.totals()["errors"]["push"] == 1
    assert [e["kind"] for e in events.named("monitor_error")] == ["push"]
    assert 'torch_compile_compiles_total{rank="0",region="b0"} 1.0' in (tmp_path / "final" / "rank0.prom").read_text()
    TALLY["compiles"] += 1


def test_scrapers_that_vanish_mid_request_or_never_finish_do_not_block_scrapes_training_or_stop(start):
    model = Tower(1)
    mon = start(regions(1) + "[monitor]\nport = 0\n", model, serve=True)
    stuck = socket.create_connection(("127.0.0.1", mon.port), timeout=5)
    stuck.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finishes its request
    for _ in range(50):  # Prometheus killed mid-scrape: the request is sent, the socket closed unread
        with socket.create_connection(("127.0.0.1", mon.port), timeout=5) as gone:
            gone.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    TALLY["faults_injected"] += 51
    sizes(model, [1, 2])
    assert scrape_families(mon.port)["torch_compile_compiles_total"][(("region", "b0"),)] == 2.0
    mon.stop()
    stuck.close()
    assert mon.ledger.totals()["errors"] == dict.fromkeys(mon.ledger.totals()["errors"], 0)
    TALLY["compiles"] += 2


def test_a_snapshot_path_that_cannot_be_written_is_counted_and_stop_still_returns(start, tmp_path: Path):
    (tmp_path / "blocked").write_text("a file where the snapshot directory should be")
    model = Tower(1)
    mon = start(regions(1) + '[monitor]\nsnapshot_path = "blocked/rank{rank}.prom"\n', model)
    sizes(model, [1])
    mon.stop()
    TALLY["faults_injected"] += 1
    assert mon.ledger.totals()["errors"]["snapshot"] == 1
    TALLY["compiles"] += 1


def openssl_cert(directory: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = directory / "cert.pem", directory / "key.pem"
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
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert, key


def test_tls_cert_paths_resolve_against_the_contract_file_and_a_verifying_https_client_scrapes(
    start, tmp_path: Path, monkeypatch
):
    tls = tmp_path / "tls"
    tls.mkdir()
    cert, _ = openssl_cert(tls)
    monkeypatch.chdir("/")
    model = Tower(1)
    mon = start(
        regions(1) + '[monitor]\nport = 0\ntls_cert = "tls/cert.pem"\ntls_key = "tls/key.pem"\n', model, serve=True
    )
    sizes(model, [1])
    ctx = ssl.create_default_context(cafile=str(cert))
    with urllib.request.urlopen(f"https://localhost:{mon.port}/metrics", context=ctx, timeout=10) as resp:
        body = resp.read().decode()
    assert 'torch_compile_compiles_total{region="b0"} 1.0' in body
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(
            f"https://localhost:{mon.port}/metrics", context=ssl.create_default_context(), timeout=10
        )
    TALLY["compiles"] += 1


def outward_ip() -> str | None:
    """This machine's address on its default route (no packet is sent), or None without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def test_the_exporter_binds_loopback_by_default_and_is_not_reachable_from_outside(start):
    mon = start(regions(1) + "[monitor]\nport = 0\n", Tower(1), serve=True)
    assert mon.server.httpd.server_address[0] == "127.0.0.1"
    ip = outward_ip()
    if ip is None:
        pytest.skip("no non-loopback address to try from")
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((ip, mon.port), timeout=5).close()


# ---- hostile guard texts -----------------------------------------------------------------------------------------


class Tagged(torch.nn.Module):
    """Branches on a string attribute: Dynamo guards on its value, and the guard text quotes the old value."""

    def __init__(self, tag: str) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.tag = tag

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * (2 if self.tag.startswith("a") else 3)


def test_megabyte_guard_texts_with_quotes_and_newlines_stay_bounded_in_labels_logs_and_errors(start, events, tmp_path):
    net = torch.nn.Module()
    net.t = Tagged("a'\"\n" * 250_000)
    mon = start('[[region]]\nname = "t"\nmodule = "t"\non_breach = "fail"\n', net)
    mon.mark_warm()
    with torch.no_grad():
        net.t(torch.ones(1, 8))
        net.t.tag = "b\n\"'" * 250_000
        net.t(torch.ones(1, 8))
    TALLY["faults_injected"] += 1
    snap = mon.snapshot()["t"]
    assert snap["recompiles"] == 1 and sum(snap["recompiles_by_reason"].values()) == 1
    assert set(snap["recompiles_by_reason"]) == set(CATEGORIES)
    assert all(len(r) <= 300 and "\n" not in r for r in snap["last_reasons"])
    for e in events.events:
        assert len(json.dumps(e, default=str)) < 4_000, e["event"]
    with pytest.raises(monitor.RecompileBudgetExceeded) as err:
        net.t(torch.ones(1, 8))
    assert len(str(err.value)) < 1_000
    TALLY["compiles"] += 2


# ---- load ------------------------------------------------------------------------------------------------------


def test_sixteen_threads_compiling_their_own_regions_at_once_are_counted_exactly(start):
    n, batch_sizes = 16, [1, 2, 3, 4, 5, 6]
    model = Tower(n)
    mon = start(regions(n), model)
    barrier, errors = threading.Barrier(n), []

    def work(block: Block) -> None:
        try:
            barrier.wait(timeout=60)
            sizes(block, batch_sizes)
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(b,)) for b in model.blocks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    TALLY["threads"] += n
    assert errors == [] and not any(t.is_alive() for t in threads)
    snap = mon.snapshot()
    assert {r: (s["compiles"], s["recompiles"]) for r, s in snap.items()} == {f"b{i}": (6, 5) for i in range(n)}
    assert mon.ledger.totals()["unclaimed"]["compiles"] == 0
    TALLY["compiles"] += n * len(batch_sizes)


def scrape_families(port: int) -> dict[str, dict[tuple, float]]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    out: dict[str, dict[tuple, float]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return out


def consistent(m: dict[str, dict[tuple, float]], region: str) -> tuple[float, float]:
    """Within one scrape: recompiles by reason add up, the histogram count equals the compiles."""
    key = (("region", region),)
    compiles = m["torch_compile_compiles_total"][key]
    recompiles = sum(v for labels, v in m["torch_compile_recompiles_total"].items() if ("region", region) in labels)
    assert m["torch_compile_compile_seconds_count"][key] == compiles
    assert recompiles <= compiles
    return compiles, recompiles


def test_scrapes_concurrent_with_compiles_are_consistent_and_monotonic(start):
    n = 4
    model = Tower(n)
    mon = start(regions(n) + "[monitor]\nport = 0\n", model, serve=True)
    stop, seen, errors = threading.Event(), ([], []), []

    def scraper(mine: list) -> None:
        while not stop.is_set():
            try:
                m = scrape_families(mon.port)
                mine.append({f"b{i}": consistent(m, f"b{i}") for i in range(n)})
            except Exception as exc:
                errors.append(exc)
                return

    threads = [threading.Thread(target=scraper, args=(mine,)) for mine in seen]
    for t in threads:
        t.start()
    sizes(model, range(1, 8))
    stop.set()
    for t in threads:
        t.join(timeout=60)
    TALLY["threads"] += 2
    assert errors == [] and all(len(mine) >= 2 for mine in seen)
    for mine in seen:
        for region in mine[0]:
            series = [s[region] for s in mine]
            assert series == sorted(series)
    final = scrape_families(mon.port)
    snap = mon.snapshot()
    assert {f"b{i}": consistent(final, f"b{i}") for i in range(n)} == dict.fromkeys(snap, (7.0, 6.0))
    TALLY["scrapes"] += sum(map(len, seen)) + 1
    TALLY["compiles"] += 7 * n


@pytest.mark.slow
def test_hundreds_of_compiles_over_resets_are_counted_exactly_and_the_monitor_state_stays_bounded(start):
    rounds, per_round = 8, 60
    net = torch.nn.Module()
    net.add = Adder()
    mon = start('[[region]]\nname = "add"\nmodule = "add"\n', net)
    sizes_seen = []
    with torch._dynamo.config.patch(recompile_limit=per_round + 1, accumulated_recompile_limit=10 * per_round):
        for _ in range(rounds):
            for b in range(1, per_round + 1):
                net.add(torch.ones(b))
            sizes_seen.append(retained_bytes(mon.ledger) + retained_bytes(mon._inflight))  # at the round's peak
            torch._dynamo.reset()
    snap = mon.snapshot()["add"]
    assert (snap["compiles"], snap["recompiles"]) == (rounds * per_round, rounds * (per_round - 1))
    assert snap["compile_events"] == rounds * per_round
    assert sum(snap["compile_seconds_buckets"]) <= rounds * per_round
    assert max(sizes_seen[2:]) - sizes_seen[2] < 16 * 1024, sizes_seen
    TALLY["compiles"] += rounds * per_round


# ---- process-level faults -----------------------------------------------------------------------------------------


class Squares(torch.utils.data.Dataset):
    """Each item runs a compiled region inside the DataLoader worker (a compile in the forked child)."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model

    def __len__(self) -> int:
        return 12

    def __getitem__(self, i: int) -> torch.Tensor:
        with torch.no_grad():
            return self.model(torch.ones(1 + i % 3, 8)).sum()


def test_dataloader_workers_forked_after_start_while_scrapes_run_neither_hang_nor_leak_counts(start):
    if torch.cuda.is_available():
        pytest.skip(
            "on a CUDA host every Dynamo compile initializes CUDA in the parent (it saves the CUDA RNG state), "
            "after which torch cannot compile in fork-started workers at all ('Cannot re-initialize CUDA in "
            "forked subprocess'), monitor or not"
        )
    model = Tower(2)
    mon = start(regions(2) + "[monitor]\nport = 0\n", model, serve=True)
    sizes(model, [1])
    stop = threading.Event()

    def scraper() -> None:
        while not stop.is_set():
            scrape_families(mon.port)

    thread = threading.Thread(target=scraper)
    thread.start()
    try:
        loader = torch.utils.data.DataLoader(
            Squares(model), batch_size=None, num_workers=2, multiprocessing_context="fork", timeout=120
        )
        for _ in range(2):
            got = [float(v) for v in loader]
    finally:
        stop.set()
        thread.join(timeout=60)
    TALLY["faults_injected"] += 4  # 2 workers forked, twice
    TALLY["threads"] += 1
    assert len(got) == 12
    sizes(model, [2])
    snap = mon.snapshot()
    assert [snap[r]["compiles"] for r in ("b0", "b1")] == [2, 2]
    TALLY["compiles"] += 4


def wait_child(pid: int, timeout: float = 60.0) -> int:
    """The child's wait status; a child still running after `timeout` is killed and reported as hung (-1)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return -1


def test_forked_children_neither_overwrite_the_final_snapshot_nor_hang_on_the_parents_server(start, tmp_path: Path):
    model = Tower(1)
    mon = start(regions(1) + '[monitor]\nport = 0\nsnapshot_path = "snap.prom"\n', model, serve=True)
    sizes(model, [1, 2, 3])
    statuses = []
    for how in ("stop", "sigterm"):  # a worker's atexit runs stop(); DataLoader's terminate() sends SIGTERM
        pid = os.fork()
        if pid == 0:
            try:
                mon.stop() if how == "stop" else os.kill(os.getpid(), signal.SIGTERM)
            finally:
                os._exit(0)
        statuses.append(wait_child(pid))
        TALLY["faults_injected"] += 1
    assert os.WIFEXITED(statuses[0]) and os.WEXITSTATUS(statuses[0]) == 0  # no wait for a server thread it lacks
    assert os.WIFSIGNALED(statuses[1]) and os.WTERMSIG(statuses[1]) == signal.SIGTERM  # still dies by SIGTERM
    assert not (tmp_path / "snap.prom").exists()  # the children's stale ledgers were never exported
    sizes(model, [4])
    mon.stop()
    assert 'torch_compile_compiles_total{rank="0",region="b0"} 4.0' in (tmp_path / "snap.prom").read_text()


SIGTERM_SCRIPT = """
import signal, sys, time
from pathlib import Path
import torch
import monitor
from tests.reliability._faults import Tower, bind, regions

out = Path(sys.argv[1])
if sys.argv[2] == "exit-handler":
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))

@torch._dynamo.register_backend(name="ccrel_slow")
def slow(gm, example_inputs):
    (out / "compiling").touch()
    time.sleep(120)
    return gm.forward

model = Tower(1)
binding = bind(out / "c.toml", regions(1, 'backend = "ccrel_slow"\\n') + '[monitor]\\nsnapshot_path = "snap.prom"\\n',
               model)
mon = monitor.start(binding, serve=False)
with torch.no_grad():
    model(torch.ones(1, 8))
"""


def sigterm_during_compile(tmp_path: Path, mode: str) -> subprocess.Popen:
    script = tmp_path / "job.py"
    script.write_text(SIGTERM_SCRIPT)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), mode],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while not (tmp_path / "compiling").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else "slow"
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=120)
    TALLY["faults_injected"] += 1
    return proc


@pytest.mark.slow
def test_sigterm_during_a_compile_in_an_engine_that_exits_on_sigterm_still_writes_the_final_snapshot(tmp_path):
    proc = sigterm_during_compile(tmp_path, "exit-handler")
    assert proc.returncode == 128 + signal.SIGTERM
    assert "Traceback" not in proc.stderr.read()
    text = (tmp_path / "snap.prom").read_text()
    assert 'torch_compile_compiles_total{rank="0",region="b0"}' in text


@pytest.mark.slow
def test_sigterm_during_a_compile_with_the_default_signal_action_still_writes_the_final_snapshot(tmp_path):
    proc = sigterm_during_compile(tmp_path, "default")
    assert proc.returncode == -signal.SIGTERM  # still "killed by SIGTERM" after the snapshot
    assert 'torch_compile_compiles_total{rank="0",region="b0"}' in (tmp_path / "snap.prom").read_text()


# ---- the Inductor cache directory disappearing under a running job -----------------------------------------------


@pytest.mark.slow
def test_inductor_cache_dir_deleted_then_unusable_mid_run_never_breaks_the_monitor(start, tmp_path: Path, monkeypatch):
    cache = tmp_path / "inductor-cache"
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
    model = Tower(1)
    mon = start(regions(1, 'backend = "inductor"\n'), model)
    outs = sizes(model, [1])
    shutil.rmtree(cache)
    outs += sizes(model, [2])
    assert cache.is_dir()
    assert all(torch.allclose(a, b) for a, b in zip(outs, eager_reference(1, [1, 2]), strict=True))
    shutil.rmtree(cache)
    cache.write_text("a file where the cache directory should be: nothing can be written under it")
    with pytest.raises(Exception) as failed:
        sizes(model, [3])
    cache.unlink()
    outs = sizes(model, [3])
    TALLY["faults_injected"] += 2
    assert type(failed.value).__name__ == "BackendCompilerFailed"  # torch's own error: the CC2xx preflight's job
    assert torch.allclose(outs[0], eager_reference(1, [3])[0])
    snap = mon.snapshot()["b0"]
    assert (snap["compiles"], snap["recompiles"]) == (4, 3)  # the failed attempt was a compile event too (time spent)
    assert snap["recompiles_by_reason"]["shape"] == 3
    assert mon.ledger.totals()["errors"] == dict.fromkeys(mon.ledger.totals()["errors"], 0)
    TALLY["compiles"] += 4


@pytest.mark.slow
def test_a_full_cache_filesystem_fails_torchs_compile_not_the_monitor_and_doctor_reports_it(
    start, tmpfs, tmp_path, monkeypatch
):
    disk = tmpfs("size=64m")  # room for a whole compile once the filler is gone (torch 2.11's C++ wrapper .so)
    cache = disk / "inductor"
    cache.mkdir()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(cache))
    model = Tower(1)
    mon = start(regions(1, 'backend = "inductor"\n') + "[cache]\nmin_free_gib = 0\nmin_free_inodes = 0\n", model)
    with open(disk / "filler", "wb", buffering=0) as fh:  # the disk fills up mid-run
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    with pytest.raises(Exception, match="No space left on device") as err:
        sizes(model, [1])  # torch's own failure: Inductor cannot write its cache (doctor's CC206 exists for this)
    assert type(err.value).__name__ in ("InductorError", "BackendCompilerFailed")
    TALLY["faults_injected"] += 1
    (tmp_path / "job.toml").write_text(f'[contract]\nname = "full"\n[cache]\ndir = "{cache}"\nmin_free_gib = 0.001\n')
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-m", "contract.cli", "doctor", str(tmp_path / "job.toml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "CC206" in proc.stdout, proc.stdout + proc.stderr
    (disk / "filler").unlink()
    outs = sizes(model, [1])  # space is back: the job compiles, the monitor counted both attempts
    assert torch.allclose(outs[0], eager_reference(1, [1])[0])
    assert mon.snapshot()["b0"]["compiles"] == 2
    assert mon.ledger.totals()["errors"] == dict.fromkeys(mon.ledger.totals()["errors"], 0)
    TALLY["compiles"] += 2
