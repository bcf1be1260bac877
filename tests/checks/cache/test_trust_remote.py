"""CC214: who else could write the remote cache torch unpickles from; a real Redis on 127.0.0.1, and names under
`.invalid` for remote hosts (read from the URL only: a subprocess with an audit hook shows nothing is sent)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from contract.checks.cache.remote import is_loopback, remote_insecure
from tests import ROOT
from tests.checks.cache.test_trust import CLEAN, CLI

REMOTE = "cache.example.invalid"
"""A name that resolves nowhere (RFC 6761): nothing can be sent to it."""


def warned(url: str | None, environ: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    return [(f.code, f.severity, f.location) for f in remote_insecure(url, environ or {})]


def message(url: str) -> str:
    [f] = remote_insecure(url, {})
    return f.message


def test_plain_redis_to_a_remote_host_says_what_someone_on_the_network_could_do() -> None:
    assert warned(f"redis://:s3cret@{REMOTE}:6379") == [("CC214", "warning", "cache.remote")]
    text = message(f"redis://:s3cret@{REMOTE}:6379")
    assert "anyone on the network path can read the password and every entry and rewrite entries in flight" in text
    assert "runs code in every rank" in text and "s3cret" not in text


def test_a_remote_host_without_a_password_can_be_written_by_anyone_who_reaches_it() -> None:
    text = message(f"redis://{REMOTE}:6379")
    assert "no password: anyone who can reach it can write entries" in text and "not loopback" in text


def test_tls_with_a_password_is_quiet() -> None:
    assert warned(f"rediss://:s3cret@{REMOTE}:6380") == []
    assert warned(f"rediss://inductor:s3cret@{REMOTE}:6380/0") == []


def test_tls_without_certificate_checks_is_a_warning() -> None:
    text = message(f"rediss://:s3cret@{REMOTE}:6380/0?ssl_cert_reqs=none")
    assert "can pose as the server" in text


def test_loopback_with_a_password_is_quiet_and_without_one_is_open_to_every_local_process() -> None:
    assert warned("redis://:s3cret@127.0.0.1:6379") == [] and warned("redis://:s3cret@[::1]:6379") == []
    assert "no password: any process on this host can write entries" in message("redis://localhost:6379")
    assert [is_loopback(h) for h in ("127.0.0.2", "::1", "LOCALHOST", "a.localhost", "10.0.0.1", REMOTE)] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]


def test_torchs_own_redis_is_checked_when_a_remote_switch_is_on_without_cache_remote() -> None:
    assert warned(None, {}) == []
    assert warned(None, {"TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE": "1"}) == [
        ("CC214", "warning", "TORCHINDUCTOR_REDIS_HOST")
    ]
    [f] = remote_insecure(None, {"TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_REDIS_HOST": REMOTE})
    assert "cannot carry one" in f.message and f.fix.startswith("export TORCHINDUCTOR_REDIS_URL=rediss://")
    url = f"rediss://:s3cret@{REMOTE}:6380"
    assert warned(None, {"TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_REDIS_URL": url}) == []


AUDITED = """
import socket, sys
events = []
sys.addaudithook(lambda event, args: event.startswith("socket.") and events.append(event))
from contract.checks.cache.remote import remote_insecure
found = [remote_insecure(url, {}) for url in sys.argv[1:]]
print(len(events), sum(len(f) for f in found))
"""


def test_reading_a_remote_url_sends_nothing_and_resolves_no_name() -> None:
    urls = [f"redis://{REMOTE}:6379", f"rediss://:pw@{REMOTE}", f"redis://:pw@{REMOTE}:1/0?ssl_cert_reqs=none"]
    res = subprocess.run(
        [sys.executable, "-c", AUDITED, *urls], cwd=ROOT, env=CLEAN, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["0", "2"]  # no socket event at all; the plain-redis URLs warned


@pytest.mark.parametrize(
    "args, expected",
    [((), [("CC214", "cache.remote")]), (("--requirepass", "s3cret"), [])],
    ids=["no-password", "password"],
)
def test_doctor_on_a_real_local_redis_warns_only_without_a_password(write_contract, start_redis, args, expected):
    server = start_redis(*args)
    path = write_contract(f'[contract]\nname = "c"\n[cache]\nremote = "{server.url}"\n')
    env = {**CLEAN, "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE": "1", "TORCHINDUCTOR_REDIS_URL": server.url}
    res = subprocess.run(
        [CLI, "doctor", str(path), "--format", "json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    findings = [(f["code"], f["location"]) for f in json.loads(res.stdout)["findings"] if f["code"] != "CC210"]
    assert findings == expected and res.returncode == 0  # CC210: only when the redis package is missing
