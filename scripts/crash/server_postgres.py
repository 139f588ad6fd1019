#!/usr/bin/env python3
"""Two `tokenmint serve` processes on one PostgreSQL database accept each of
10,000 payments exactly once, through a SIGKILL of one of them.

Both servers share the payment state on PostgreSQL (`--postgres`: ledger,
grants, devices, means, transactions, events), one state directory (keys,
OAuth clients) and one `--issuer` (their public name). An independent device (pyca/cryptography, joserfc) registers
at one server, a desk enrols it at the other, the device takes its offline
grant at the first. Then 8 desk threads present 10,000 offline tokens, each
to a server picked at random; server A is SIGKILLed after a quarter of the
answers, and every attempt it cut off is retried at server B. Checks: every
acknowledged payment is accepted again under its attempt at the other server
with the same transaction ID; every token presented under a second attempt
is refused as replayed, whichever server sees it; the device's transactions
list (either server) holds 10,000 payments.

Needs TOKENMINT_POSTGRES_URL (scripts/postgres-cluster start prints it) and
the CLI in $TOKENMINT (default .build/debug/tokenmint). `--tokens N`.
"""
import argparse
import concurrent.futures
import os
import random
import signal
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
import server_e2e  # noqa: E402
from server_e2e import Device, Server, add_client, check, desk_token, free_port, pay, request  # noqa: E402


ISSUER = "http://pay.tokenmint.test"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=10000)
    args = parser.parse_args()
    url = os.environ.get("TOKENMINT_POSTGRES_URL")
    if not url:
        print("server_postgres: TOKENMINT_POSTGRES_URL is not set (scripts/postgres-cluster start prints it)")
        return 2
    total = args.tokens
    with tempfile.TemporaryDirectory(prefix="tokenmint-serve-pg-") as state:
        add_client(state)
        # One public name for both instances (behind one load balancer, say):
        # the OAuth issuer and the audience of device JWTs.
        extra = ["--postgres", url, "--offline-grant", str(total), "--issuer", ISSUER]
        a = Server(state, free_port(), extra_args=extra)
        b = Server(state, free_port(), extra_args=extra)
        a.start()
        b.start()
        try:
            _, _, answer = desk_token(a)
            desk = answer["access_token"]
            _, _, answer_b = desk_token(b)
            check("both servers share the issuer's key: a token from one is a desk token at the other",
                  request(b, "GET", "/wlp/v1/transactions?size=1", headers={"Authorization": "Bearer " + desk})[0] == 200)
            device = Device()
            status, _, _ = request(a, "POST", "/wlp/v1/devices", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + device.jwt(ISSUER)})
            check("the device registers at server A", status == 201)
            status, _, body = request(b, "POST", "/wlp/v1/enrolments", {"enrolmentToken": device.enrolment}, headers={"Authorization": "Bearer " + desk})
            check("a desk enrols it at server B (the directory is shared)", status == 201, body)
            means = body["paymentMeansId"]
            status, _, grant = request(a, "POST", f"/wlp/v1/devices/{device.subject}/offline-grants", {"count": total},
                                       headers={"Authorization": "Bearer " + device.jwt(ISSUER)})
            check(f"server A grants {total} offline counters", status == 201 and grant.get("count") == total, grant)
            jwt = device.jwt(ISSUER)
            request(a, "GET", f"/wlp/v1/devices/{device.subject}", headers={"Authorization": "Bearer " + jwt})
            status, _, _ = request(b, "GET", f"/wlp/v1/devices/{device.subject}", headers={"Authorization": "Bearer " + jwt})
            check("a device JWT used at A is refused at B (one jti ledger)", status == 401)

            tokens = {f"pg-{n}": device.offline(means, grant["first"] + n - 1) for n in range(1, total + 1)}
            answers = {}
            lock = threading.Lock()
            killed = threading.Event()
            rng = random.Random(7)
            target = {attempt: (a if rng.random() < 0.5 else b) for attempt in tokens}

            def one(attempt):
                server = target[attempt]
                if server is a and killed.is_set():
                    return
                try:
                    status, _, body = pay(server, desk, tokens[attempt], attempt)
                except OSError:
                    return
                with lock:
                    answers[attempt] = (server, status, body)
                    if len(answers) == total // 4 and not killed.is_set():
                        killed.set()
                        a.process.send_signal(signal.SIGKILL)

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                list(pool.map(one, tokens))
            a.stop(signal.SIGKILL)
            acknowledged = {attempt: body["transactionId"] for attempt, (_, status, body) in answers.items() if status == 200}
            refused = [(attempt, body) for attempt, (_, status, body) in answers.items() if status != 200]
            check(f"SIGKILL of server A mid-run: {len(acknowledged)} acknowledged, {total - len(answers)} cut off, none refused",
                  not refused and 0 < len(acknowledged) < total, refused[:3])
            lost = [attempt for attempt in tokens if attempt not in acknowledged]
            retried = {}
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                for attempt, (status, _, body) in zip(lost, pool.map(lambda t: pay(b, desk, tokens[t], t), lost)):
                    retried[attempt] = (status, body)
            check(f"the {len(lost)} cut-off attempts retried at server B: each accepted",
                  all(status == 200 for status, _ in retried.values()), [v for v in retried.values() if v[0] != 200][:3])
            sample = list(acknowledged)[:: max(1, len(acknowledged) // 500)]
            same = all(pay(b, desk, tokens[t], t)[2].get("transactionId") == acknowledged[t] for t in sample)
            check(f"acknowledged attempts retried at server B ({len(sample)} sampled): the same transaction IDs", same)

            def again(attempt):
                return pay(b, desk, tokens[attempt], attempt + "-again")[2].get("error")
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                errors = list(pool.map(again, tokens))
            check(f"each of the {total} tokens under a second attempt: replayedToken", all(e == "replayedToken" for e in errors),
                  [e for e in errors if e != "replayedToken"][:3])
            a = Server(state, a.port, extra_args=extra)
            a.start()
            _, _, page = request(a, "GET", "/wlp/v1/transactions?size=1", headers={"Authorization": "Bearer " + device.jwt(ISSUER)})
            check(f"server A restarted: the device's transactions list holds {total} payments", page.get("totalElements") == total, page.get("totalElements"))
        finally:
            for server in (a, b):
                if server.process and server.process.poll() is None:
                    server.stop()
    print(f"{server_e2e.passed} passed, {server_e2e.failed} failed")
    return 1 if server_e2e.failed else 0


if __name__ == "__main__":
    sys.exit(main())
