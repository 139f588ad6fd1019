#!/usr/bin/env python3
"""Requests per second and p50/p99 latency of `tokenmint serve`, driven by wrk.

Rows, each at 1, 16 and 64 connections, all in the same run on the same
server: GET /healthz (the HTTP limit: the smallest route there is),
POST /wlp/v1/payments (SQLite: each request a fresh offline token of an
enrolled device, verified, recorded once and answered after its transaction
commits), and POST /oauth/token with the refresh grant (each request spends a
refresh token and mints the next pair). Payment tokens are signed beforehand
(pyca/cryptography); refresh tokens come from real code-flow logins, one
family per connection, each response's new token reused by the next request.

With --postgres URL (or $TOKENMINT_POSTGRES_URL) the payments and refresh
rows are measured again on a server whose state (payments and OAuth) is on
a new database of that PostgreSQL cluster.

Usage: server_wrk.py [--binary PATH] [--seconds N] [--connections 1,16,64] [--postgres URL].
A benchmark, not a test: it prints figures and the payments/healthz ratio at
the highest connection count (goal: >= 0.5 on SQLite); it fails when a
row cannot be measured or answers anything but 2xx.
"""
import argparse
import base64
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import server_e2e  # noqa: E402
from server_e2e import DESK_SECRET, Device, Server, desk_token, free_port, request  # noqa: E402

LUA = r"""
local items = {}
local next_item = 1
local path, method, content_type, auth, mode, prefix = "%(path)s", "%(method)s", "%(ctype)s", "%(auth)s", "%(mode)s", "%(prefix)s"
function init(args)
  for line in io.lines(args[1]) do items[#items + 1] = line end
end
local primed = false
function request()
  local item = items[next_item]
  -- wrk builds one request before the run that it never sends: it takes nothing.
  if primed and mode == "payments" then next_item = next_item + 1 end
  if primed and mode == "refresh" then table.remove(items, next_item) end
  primed = true
  if item == nil then item = "" end
  local body = nil
  if mode == "payments" then
    body = '{"paymentToken":"' .. item .. '","amount":{"value":100,"currency":"EUR"},"attemptId":"' .. prefix .. tostring(next_item) .. '"}'
  elseif mode == "refresh" then
    body = "grant_type=refresh_token&client_id=bench-app&refresh_token=" .. item
  end
  local headers = {}
  if content_type ~= "" then headers["Content-Type"] = content_type end
  if auth ~= "" then headers["Authorization"] = auth end
  return wrk.format(method, path, headers, body)
end
local reported = 0
function response(status, headers, body)
  if status >= 300 and reported < 3 then
    reported = reported + 1
    io.write("NON2XX ", status, " ", string.sub(body, 1, 200), "\n")
  end
  if mode == "refresh" and status == 200 then
    local token = string.match(body, '"refresh_token":"([^"]+)"')
    if token then items[#items + 1] = token end
  end
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %%d %%d %%d %%d %%d\n", summary.requests, summary.duration, summary.errors.status,
    latency:percentile(50), latency:percentile(99)))
end
"""


def ensure_wrk():
    """Installs Debian's wrk when it is missing (as root, or through sudo)."""
    if shutil.which("wrk"):
        return
    prefix = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(prefix + ["apt-get", "update", "-qq"], check=False, env=env, capture_output=True)
    subprocess.run(prefix + ["apt-get", "install", "-y", "-qq", "wrk"], check=True, env=env, capture_output=True)


def wrk(base, seconds, connections, script, data_file):
    result = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", script, base, "--", data_file],
                            capture_output=True, text=True, timeout=seconds + 60)
    line = next((l for l in result.stdout.splitlines() if l.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no result: {result.stdout[-500:]} {result.stderr[-500:]}")
    requests, duration_us, non2xx, p50, p99 = map(int, line.split()[1:])
    for sample in [l for l in result.stdout.splitlines() if l.startswith("NON2XX ")][:3]:
        print("  " + sample[7:], file=sys.stderr)
    return {"rps": requests / (duration_us / 1e6), "p50_ms": p50 / 1000, "p99_ms": p99 / 1000, "non2xx": non2xx, "requests": requests}


def script(directory, name, **values):
    path = os.path.join(directory, name + ".lua")
    with open(path, "w") as handle:
        handle.write(LUA % values)
    return path


def login(server, username, password, verifier):
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    redirect = "http://127.0.0.1:9/cb"
    form = urllib.parse.urlencode({"response_type": "code", "client_id": "bench-app", "redirect_uri": redirect, "code_challenge": challenge,
                                   "code_challenge_method": "S256", "state": "s", "username": username, "password": password}).encode()
    status, headers, _ = request(server, "POST", "/oauth/authorize", raw=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    location = headers.get("Location") or headers.get("location")
    code = urllib.parse.parse_qs(urllib.parse.urlparse(location).query)["code"][0]
    form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect, "client_id": "bench-app",
                                   "code_verifier": verifier}).encode()
    _, _, body = request(server, "POST", "/oauth/token", raw=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    return body["refresh_token"]


RUN = secrets.token_hex(6)


def start_server(binary, state, extra=()):
    server = Server(state, free_port())
    server.process = subprocess.Popen([binary, "serve", "--state", state, "--port", str(server.port), "--authorized-party", server_e2e.AZP,
                                       "--offline-grant", "10000", "--log-level", "error", *extra],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not server.process.stdout.readline().startswith("listening on"):
        raise RuntimeError("the server did not start: " + server.process.stderr.read()[-1000:])
    return server


def payment_tokens(server, desk, work, name, count):
    """A fresh device registered and enrolled at `server`, granted `count`
    offline counters, and that many signed payment tokens in a file."""
    device = Device()
    request(server, "POST", "/wlp/v1/devices", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + device.jwt(server.base)})
    _, _, body = request(server, "POST", "/wlp/v1/enrolments", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + desk})
    means = body["paymentMeansId"]
    granted = 0
    while granted < count:
        _, _, grant = request(server, "POST", f"/wlp/v1/devices/{device.subject}/offline-grants", {"count": 10000},
                              headers={"Authorization": "Bearer " + device.jwt(server.base)})
        granted += grant["count"]
    tokens = os.path.join(work, f"tokens-{name}.txt")
    with open(tokens, "w") as handle:
        for counter in range(1, granted + 1):
            handle.write(device.offline(means, counter) + "\n")
    return tokens


def payment_row(server, desk, work, tokens, offset, connections, seconds, label):
    """One wrk row of payments with tokens no earlier row used; the new offset."""
    level_tokens = os.path.join(work, f"tokens-{label}-{connections}.txt")
    with open(tokens) as source, open(level_tokens, "w") as target:
        target.writelines(source.readlines()[offset:])
    # Attempt IDs unique across rows and runs (a PostgreSQL database outlives
    # the run): each row's script has its own prefix.
    pay = script(work, f"pay-{label}-{connections}", path="/wlp/v1/payments", method="POST", ctype="application/json",
                 auth="Bearer " + desk, mode="payments", prefix=f"{label}{connections}-{RUN}-")
    result = wrk(server.base, seconds, connections, pay, level_tokens)
    return result, offset + result["requests"] + connections


def setup(binary, state, extra=()):
    """The desk client, the code-flow client and the account of the rows."""
    subprocess.run([binary, "serve", "client", "add", "--state", state, "--id", "desk-1", "--secret-stdin", *extra], input=DESK_SECRET + "\n",
                   capture_output=True, text=True, check=True)
    subprocess.run([binary, "serve", "client", "add", "--state", state, "--id", "bench-app", "--redirect-uri", "http://127.0.0.1:9/cb",
                    "--grant", "authorization_code", "--grant", "refresh_token", *extra], capture_output=True, text=True, check=True)
    subprocess.run([binary, "serve", "account", "add", "--state", state, "--username", "bench", "--password-stdin", *extra],
                   input="bench password\n", capture_output=True, text=True, check=True)


def refresh_row(server, work, refresh, connections, seconds, label):
    """One wrk row of refresh grants, one fresh family per connection."""
    families = os.path.join(work, f"refresh-{label}-{connections}.txt")
    with open(families, "w") as handle:
        for _ in range(connections):
            handle.write(login(server, "bench", "bench password", secrets.token_urlsafe(48)) + "\n")
    return wrk(server.base, seconds, connections, refresh, families)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.environ.get("TOKENMINT", ".build/debug/tokenmint"))
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", default="1,16,64")
    parser.add_argument("--postgres", default=os.environ.get("TOKENMINT_POSTGRES_URL"),
                        help="also measure payments with the payment state on this PostgreSQL server (default: $TOKENMINT_POSTGRES_URL)")
    args = parser.parse_args()
    server_e2e.TOKENMINT = args.binary
    ensure_wrk()
    levels = [int(c) for c in args.connections.split(",")]
    rows = []
    per_level = 4000 * args.seconds
    with tempfile.TemporaryDirectory(prefix="tokenmint-wrk-") as work:
        state = os.path.join(work, "state")
        setup(args.binary, state)
        server = start_server(args.binary, state)
        try:
            _, _, answer = desk_token(server)
            desk = answer["access_token"]
            tokens = payment_tokens(server, desk, work, "sqlite", per_level * len(levels))
            empty = os.path.join(work, "empty.txt")
            open(empty, "w").close()
            health = script(work, "health", path="/healthz", method="GET", ctype="", auth="", mode="health", prefix="")
            refresh = script(work, "refresh", path="/oauth/token", method="POST", ctype="application/x-www-form-urlencoded", auth="", mode="refresh",
                             prefix="")
            offset = 0
            for connections in levels:
                rows.append(("GET /healthz", connections, wrk(server.base, args.seconds, connections, health, empty)))
                result, offset = payment_row(server, desk, work, tokens, offset, connections, args.seconds, "s")
                rows.append(("POST /wlp/v1/payments (SQLite)", connections, result))
                rows.append(("POST /oauth/token refresh grant (SQLite)", connections, refresh_row(server, work, refresh, connections, args.seconds, "s")))
        finally:
            server.stop()
        if args.postgres:
            # The same server with its state (payments and OAuth) on a new
            # PostgreSQL database.
            state = os.path.join(work, "state-postgres")
            shared = ["--postgres", server_e2e.fresh_database(args.postgres, "serve_wrk")]
            setup(args.binary, state, shared)
            server = start_server(args.binary, state, shared)
            try:
                _, _, answer = desk_token(server)
                desk = answer["access_token"]
                tokens = payment_tokens(server, desk, work, "postgres", per_level * len(levels))
                offset = 0
                for connections in levels:
                    result, offset = payment_row(server, desk, work, tokens, offset, connections, args.seconds, "p")
                    rows.append(("POST /wlp/v1/payments (PostgreSQL)", connections, result))
                    rows.append(("POST /oauth/token refresh grant (PostgreSQL)", connections,
                                 refresh_row(server, work, refresh, connections, args.seconds, "p")))
            finally:
                server.stop()
    print(f"{'row':45} {'conns':>5} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, connections, result in rows:
        print(f"{name:45} {connections:5} {result['rps']:9.0f} {result['p50_ms']:8.2f} {result['p99_ms']:8.2f} {result['non2xx']:8}")
    top = max(levels)
    bare = next(r for n, c, r in rows if n == "GET /healthz" and c == top)
    for label in ("SQLite", "PostgreSQL"):
        paid = next((r for n, c, r in rows if n == f"POST /wlp/v1/payments ({label})" and c == top), None)
        if paid:
            goal = " (goal >= 0.5)" if label == "SQLite" else ""
            print(f"payments ({label}) / healthz at {top} connections: {paid['rps'] / bare['rps']:.2f}x{goal}")
    failures = [f"{n} at {c}" for n, c, r in rows if r["non2xx"] or not r["requests"]]
    if failures:
        print("rows with errors: " + ", ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
