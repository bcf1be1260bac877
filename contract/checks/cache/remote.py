"""The remote cache (CC209, CC210, CC214): a Redis that must answer `PING` at start (TLS for `rediss://`, AUTH from the
URL), that torch's own remote-cache switches actually point at, and that only the job can write (torch unpickles what
it reads from there: `torch/_inductor/remote_cache.py`, 2.11 and 2.13)."""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from contract.checks.cache.rules import REMOTE_DOWN, REMOTE_INSECURE, REMOTE_UNUSED
from contract.findings import Finding


@dataclass(frozen=True, kw_only=True)
class RedisAddress:
    """Where a `redis://` URL points and how to authenticate there."""

    host: str
    """Host name or address (default `localhost`)."""
    port: int
    """TCP port (default 6379)."""
    username: str | None = None
    """ACL user from the URL (`redis://user:pass@...`); None for the default user."""
    password: str | None = None
    """Password from the URL, if any."""
    tls: bool = False
    """True for `rediss://`."""


def redis_address(url: str) -> RedisAddress:
    """Parse `redis[s]://[[user]:pass@]host[:port][/db]` (raises ValueError for a bad port)."""
    parts = urlsplit(url)
    return RedisAddress(
        host=parts.hostname or "localhost",
        port=parts.port or 6379,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        tls=parts.scheme == "rediss",
    )


def check_remote(url: str, timeout_s: float = 1.0) -> list[Finding]:
    """CC209: a real PING over RESP (TLS for rediss://, AUTH [user] password when the URL has a password)."""
    try:
        addr = redis_address(url)
    except ValueError as exc:
        return [REMOTE_DOWN.finding("cache.remote", f"cannot parse {url!r}: {exc}", 'write it as "redis://host:port"')]
    problem = ping_redis(
        addr.host, addr.port, username=addr.username, password=addr.password, tls=addr.tls, timeout_s=timeout_s
    )
    if problem is None:
        return []
    return [
        REMOTE_DOWN.finding(
            "cache.remote",
            f"Redis at {addr.host}:{addr.port} does not answer: {problem}",
            f"start Redis on {addr.host}:{addr.port} or correct cache.remote; check the network path",
        )
    ]


def ping_redis(
    host: str,
    port: int,
    *,
    password: str | None = None,
    username: str | None = None,
    tls: bool = False,
    timeout_s: float = 1.0,
) -> str | None:
    """None when the server answers PONG, else why not (one line); `AUTH user pass` for an ACL user."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as raw:
            sock = ssl.create_default_context().wrap_socket(raw, server_hostname=host) if tls else raw
            if password is not None:
                sock.sendall(_resp("AUTH", *((username,) if username else ()), password))
                reply = _read_line(sock)
                if not reply.startswith(b"+OK"):
                    return f"AUTH refused ({reply.decode(errors='replace')[:80]})"
            sock.sendall(_resp("PING"))
            reply = _read_line(sock)
    except (OSError, ValueError) as exc:  # ValueError: a host name that does not encode (IDNA)
        return f"{type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
    if reply.startswith(b"+PONG"):
        return None
    return f"unexpected reply {reply.decode(errors='replace')[:80]!r}"


def _resp(*args: str) -> bytes:
    """A RESP array of bulk strings, the Redis wire format for a command."""
    out = [f"*{len(args)}\r\n".encode()]
    for a in args:
        data = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_line(sock: socket.socket, limit: int = 4096) -> bytes:
    """One CRLF-terminated reply line (simple string or error)."""
    buf = b""
    while not buf.endswith(b"\r\n") and len(buf) < limit:
        chunk = sock.recv(limit - len(buf))
        if not chunk:
            break
        buf += chunk
    return buf.strip()


def remote_unused(url: str, environ: Mapping[str, str], switches: dict[str, bool] | None) -> list[Finding]:
    """CC210: reasons torch would not use the configured Redis at all."""
    import importlib.util

    fix = f"export TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE=1 TORCHINDUCTOR_REDIS_URL={url} before python starts"
    out = []
    if importlib.util.find_spec("redis") is None:
        out.append(
            REMOTE_UNUSED.finding(
                "cache.remote",
                "the redis Python package is not installed; torch needs it for the remote cache",
                "pip install redis",
            )
        )
    enabled = (
        switches["fx_graph_remote_cache"] if switches else environ.get("TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE") == "1"
    )
    if not enabled:
        out.append(
            REMOTE_UNUSED.finding(
                "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE",
                "the remote FX graph cache is off (it is off by default outside Meta)",
                fix,
            )
        )
        return out
    target = _torch_redis_target(environ)
    try:
        wanted = _host_port(redis_address(url))
    except ValueError:
        return out  # CC209 already reports the unparsable URL
    if target != wanted:
        out.append(
            REMOTE_UNUSED.finding(
                "TORCHINDUCTOR_REDIS_URL", f"torch would connect to {target[0]}:{target[1]}, not {url}", fix
            )
        )
    return out


def _torch_redis_target(environ: Mapping[str, str]) -> tuple[str, int]:
    """Where torch's Redis backend connects: TORCHINDUCTOR_REDIS_URL, else _HOST/_PORT (default localhost:6379)."""
    if environ.get("TORCHINDUCTOR_REDIS_URL"):
        try:
            return _host_port(redis_address(environ["TORCHINDUCTOR_REDIS_URL"]))
        except ValueError:
            return environ["TORCHINDUCTOR_REDIS_URL"], -1
    try:
        port = int(environ.get("TORCHINDUCTOR_REDIS_PORT", "6379"))
    except ValueError:
        port = -1
    return environ.get("TORCHINDUCTOR_REDIS_HOST", "localhost"), port


def _host_port(addr: RedisAddress) -> tuple[str, int]:
    """Where an address connects; credentials do not change which server torch talks to."""
    return addr.host, addr.port


REMOTE_SWITCHES = (
    "TORCHINDUCTOR_FX_GRAPH_REMOTE_CACHE",
    "TORCHINDUCTOR_AUTOTUNE_REMOTE_CACHE",
    "TORCHINDUCTOR_BUNDLED_AUTOTUNE_REMOTE_CACHE",
    "TORCHINDUCTOR_AUTOGRAD_REMOTE_CACHE",
    "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_REMOTE_PGO",
)
"""The variables that turn a Redis-backed remote cache on (`1`), torch 2.11 and 2.13."""
_PLANTED = "torch unpickles the entries it reads, so a planted entry runs code in every rank that reads it"


def remote_insecure(url: str | None, environ: Mapping[str, str]) -> list[Finding]:
    """CC214 for `[cache] remote`, or, without one, for the Redis torch itself uses when a remote switch is on.
    Reads the URL only: nothing is sent, no name is resolved."""
    if url:
        return _exposure(url, "cache.remote")
    if not any(environ.get(var) == "1" for var in REMOTE_SWITCHES):
        return []
    if environ.get("TORCHINDUCTOR_REDIS_URL"):
        return _exposure(environ["TORCHINDUCTOR_REDIS_URL"], "TORCHINDUCTOR_REDIS_URL")
    host = environ.get("TORCHINDUCTOR_REDIS_HOST", "localhost")
    port = environ.get("TORCHINDUCTOR_REDIS_PORT", "6379")
    return _exposure(f"redis://{host}:{port}", "TORCHINDUCTOR_REDIS_HOST", host_port=True)


def _exposure(url: str, where: str, *, host_port: bool = False) -> list[Finding]:
    """One CC214 finding listing what an attacker could do to the cache at `url` (none when it is TLS + password)."""
    try:
        parts = urlsplit(url)
        addr = redis_address(url)
    except ValueError:
        return []  # CC209 reports a URL that does not parse
    query = {k.lower(): v[-1] for k, v in parse_qs(parts.query).items()}
    local = parts.scheme == "unix" or is_loopback(addr.host)
    risks = _risks(addr, query, local=local, host_port=host_port)
    if not risks:
        return []
    target = f"{addr.host}:{addr.port}"
    safe = f"redis://:PASSWORD@{target}" if local else f"rediss://USER:PASSWORD@{target}"
    fix = (
        f"export TORCHINDUCTOR_REDIS_URL={safe} (and set [cache] remote to it)"
        if host_port
        else f"use {safe} ({'a password' if local else 'TLS and AUTH'}: requirepass or an ACL user on the server)"
        + ("" if local else ", reachable only from the job's hosts")
    )
    return [REMOTE_INSECURE.finding(where, f"remote cache {_shown(addr)}: " + "; ".join(risks) + f"; {_PLANTED}", fix)]


def _risks(addr: RedisAddress, query: Mapping[str, str], *, local: bool, host_port: bool) -> list[str]:
    """What someone other than the job could do to this cache: read and rewrite, write, or pose as the server."""
    password = addr.password or query.get("password")
    out = []
    if not addr.tls and not local:
        what = "the password and every entry" if password else "every entry"
        out.append(
            f"plain redis:// to {addr.host}:{addr.port}, not loopback: anyone on the network path can read {what} "
            "and rewrite entries in flight"
        )
    if not password:
        who = "any process on this host" if local else "anyone who can reach it"
        form = " (torch's TORCHINDUCTOR_REDIS_HOST/_PORT form cannot carry one)" if host_port else ""
        out.append(f"no password{form}: {who} can write entries")
    if addr.tls and query.get("ssl_cert_reqs", "").lower() in ("none", "cert_none"):
        out.append(
            "TLS without certificate checks (ssl_cert_reqs=none): anyone on the network path can pose as the server"
        )
    return out


def is_loopback(host: str) -> bool:
    """`localhost`, `*.localhost` (RFC 6761) or a loopback address; any other name counts as remote (unresolved)."""
    name = host.strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _shown(addr: RedisAddress) -> str:
    """The URL without its password, for messages."""
    user = f"{addr.username or ''}:***@" if addr.password else ""
    return f"{'rediss' if addr.tls else 'redis'}://{user}{addr.host}:{addr.port}"
