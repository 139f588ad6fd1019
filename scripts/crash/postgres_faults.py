#!/usr/bin/env python3
"""Four verifier processes, one PostgreSQL ledger, faults in between.

Mints N payment tokens (default 10,000) on one device, then starts four cash
desks — `tokenmint pay verify --postgres URL --stdin`, one process each — that
verify every token in their own random order, each line tagged with the
desk's payment attempt ("d<desk>-<index>"). While they run, one desk is killed
with SIGKILL (and started again on what it had not answered), and the
database server is restarted (`scripts/postgres-cluster restart`); a desk
whose store call fails stops with exit 2 and is started again on what it had
not answered. A retried line keeps its attempt, so an acceptance whose answer
was lost in the crash is given again, not refused as a replay.

Checks: every token accepted by exactly one desk (no double acceptance, no
lost acceptance), every other answer is `replayedToken`, and every desk
answered every token. Needs TOKENMINT_POSTGRES_URL (scripts/postgres-cluster
start). The CLI is $TOKENMINT (default .build/debug/tokenmint).
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tmcli import TOKENMINT, Checks  # noqa: E402
from pay_verify import tm_ok as tm  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PUSH = '{"aps":{},"yp-type":"enrolment-succeeded.v1"}'
checks = Checks()


class Desk:
    """One verifier process at a time for one desk; restarts on what is unanswered."""

    def __init__(self, number, url, enrolment, lines):
        self.number, self.url, self.enrolment = number, url, enrolment
        self.pending = list(lines)          # (attempt, token) not answered yet, in order
        self.answers = {}                   # attempt -> (token, answer dict)
        self.lock = threading.Lock()
        self.proc = None
        self.starts = 0
        self.exits = []

    def start(self):
        with self.lock:
            todo = list(self.pending)
        self.starts += 1
        self.proc = subprocess.Popen(
            [TOKENMINT, "pay", "verify", "--postgres", self.url, "--enrolment", self.enrolment, "--lifetime", "86400", "--stdin"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        proc = self.proc

        def feed():
            try:
                for attempt, token in todo:
                    proc.stdin.write(f"{attempt} {token}\n")
                proc.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass

        threading.Thread(target=feed, daemon=True).start()
        self.reader = threading.Thread(target=self.read, args=(proc, todo), daemon=True)
        self.reader.start()

    def read(self, proc, todo):
        index = 0
        for line in proc.stdout:
            try:
                answer = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by SIGKILL
            attempt, token = todo[index]
            index += 1
            with self.lock:
                self.answers[attempt] = (token, answer)
                self.pending.remove((attempt, token))

    def poll(self):
        """Restarts the process if it ended with lines unanswered; returns True when done."""
        if self.proc is None:
            return False
        rc = self.proc.poll()
        if rc is None:
            return False
        self.reader.join(timeout=5)
        self.exits.append(rc)
        with self.lock:
            left = len(self.pending)
        if left == 0:
            return True
        time.sleep(0.2)
        self.start()
        return False

    def progress(self):
        with self.lock:
            return len(self.answers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    url = os.environ.get("TOKENMINT_POSTGRES_URL")
    if not url:
        print("postgres_faults: TOKENMINT_POSTGRES_URL is not set (scripts/postgres-cluster start prints it)")
        return 1
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"     seed {seed}, {args.tokens} tokens, 4 desks")

    with tempfile.TemporaryDirectory() as store:
        tm("pay", "init", "--store", store, "--tenant", str(uuid.uuid4()), "--reference", str(uuid.uuid4()), "--offline-limit", "0")
        tm("pay", "means", "add", "--store", store, "card-1")
        enrolment = tm("pay", "enrol", "--store", store)
        tm("pay", "push", "--store", store, PUSH)
        tokens = tm("pay", "mint", "--store", store, "--count", str(args.tokens)).split()
    checks("minted every token", len(tokens) == args.tokens, len(tokens))
    tm("pay", "verifier", "migrate", "--postgres", url)

    desks = []
    for number in range(4):
        order = list(range(len(tokens)))
        rng.shuffle(order)
        desks.append(Desk(number, url, enrolment, [(f"d{number}-{i}", tokens[i]) for i in order]))
    started = time.monotonic()
    for desk in desks:
        desk.start()

    total = 4 * len(tokens)
    killed = restarted = False
    kill_at, restart_at = rng.uniform(0.15, 0.35), rng.uniform(0.45, 0.7)
    done = set()
    while len(done) < 4:
        answered = sum(d.progress() for d in desks)
        if not killed and answered >= kill_at * total:
            victim = desks[rng.randrange(4)]
            if victim.proc and victim.proc.poll() is None:
                victim.proc.send_signal(signal.SIGKILL)
                killed = True
                print(f"     SIGKILL desk {victim.number} at {answered}/{total} answers")
        if not restarted and answered >= restart_at * total:
            t0 = time.monotonic()
            subprocess.run([os.path.join(ROOT, "scripts", "postgres-cluster"), "restart"], check=True)
            restarted = True
            print(f"     database server restarted at {answered}/{total} answers ({time.monotonic() - t0:.1f} s)")
        for desk in desks:
            if desk.number not in done and desk.poll():
                done.add(desk.number)
        if time.monotonic() - started > 900:
            checks.fail("the desks did not finish within 15 minutes")
            break
        time.sleep(0.05)
    elapsed = time.monotonic() - started

    accepted_by = {}
    other = []
    for desk in desks:
        for attempt, (token, answer) in desk.answers.items():
            if answer.get("valid"):
                accepted_by.setdefault(token, set()).add(desk.number)
            elif answer.get("error") != "replayedToken":
                other.append((desk.number, answer.get("error")))
    restarts = sum(d.starts - 1 for d in desks)
    print(f"     {elapsed:.1f} s, {restarts} process restarts, exits {[d.exits for d in desks]}")
    checks("a desk was killed and the database server restarted mid-run", killed and restarted)
    checks("every desk answered every token", all(not d.pending for d in desks), [len(d.pending) for d in desks])
    checks("no token accepted by two desks (no double acceptance)",
           all(len(v) == 1 for v in accepted_by.values()), [t[:24] for t, v in accepted_by.items() if len(v) > 1][:3])
    checks("every token accepted by one desk (no acceptance lost to the kill or the restart)",
           len(accepted_by) == len(tokens), f"{len(accepted_by)} of {len(tokens)}")
    checks("every other answer is replayedToken", not other, other[:5])
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
