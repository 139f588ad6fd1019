#!/usr/bin/env python3
"""SIGKILL harness for the durable state of FIDO2 and of refresh-token rotation.

F (signCounts): one credential is made in a fresh store with `fido2 register`;
then `tokenmint fido2 assert` runs over and over and is killed with SIGKILL
after a random delay until N kills have landed. Every assertion that reached
stdout is kept. Afterwards: the signCounts of the printed assertions rise
strictly in the order they were printed (no counter reused or decreased), the
store still opens, and one more assertion counts above all of them.

R (refresh rotation): `auth issue` starts a family; `tokenmint auth refresh`
runs over and over on the newest refresh token and is killed at random. A run
that printed its pair hands the next token on; a run killed after it spent the
token but before the pair came out leaves the client with a spent token, whose
next use must be refused as reuse (and the harness then starts a new family
with `auth issue`, as a client would sign in again). Afterwards: no refresh
token ever produced two pairs, every token that produced a pair is refused
when presented again, the store still opens and issues and verifies.

Kill delays are uniform in [0, W], W = 1.25 x the median run time of unkilled
runs, so kills land everywhere from start-up to the commit and the output.
The CLI is taken from $TOKENMINT (default .build/debug/tokenmint). Prints the
figures and ends with `N passed, M failed` (exit 1 if anything failed).
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from tmcli import Checks, b64d, b64u, command, run  # noqa: E402

RP, ORIGIN = "tokenmint.test", "https://tokenmint.test"
ACCOUNT = "6f1c2a8e-3b7d-4e5f-9a0b-1c2d3e4f5a6b"

check = Checks()


def killed_run(store, args, delay):
    """Starts the CLI, kills it after `delay` seconds unless it finished; returns (rc or None, stdout, stderr)."""
    proc = subprocess.Popen(command(store, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=delay)
        return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out.decode(errors="replace"), ""


def full_json(text):
    """The JSON object a run printed, if it printed all of it."""
    line = text.strip()
    if not line.endswith("}"):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def median_time(store, args, runs=5):
    times = []
    for _ in range(runs):
        start = time.monotonic()
        rc, _, err = run(store, *args)
        times.append(time.monotonic() - start)
        if rc != 0:
            raise SystemExit(f"tokenmint {' '.join(args)} failed: {err}")
    return statistics.median(times)


def sign_count(assertion):
    data = b64d(assertion["response"]["authenticatorData"])
    return int.from_bytes(data[33:37], "big")


def sign_counts(store, kills, rng):
    challenge = b64u(os.urandom(32))
    rc, out, err = run(store, "fido2", "register", "--rp", RP, "--origin", ORIGIN, f"--challenge={challenge}",
                       "--user-id", "0102", "--user-name", "alice")
    if rc != 0:
        raise SystemExit(f"fido2 register failed: {err}")
    credential = json.loads(out)["rawId"]

    def args():
        return ["fido2", "assert", "--rp", RP, "--origin", ORIGIN, f"--challenge={b64u(os.urandom(32))}", f"--credential={credential}"]

    printed = []
    warm = median_time(store, args())
    rc, out, err = run(store, *args())
    baseline = sign_count(json.loads(out))  # the count before the kills start
    window = 1.25 * warm
    landed = finished = 0
    while landed < kills:
        rc, out, err = killed_run(store, args(), rng.uniform(0, window))
        assertion = full_json(out)
        if assertion is not None:
            printed.append(sign_count(assertion))
        if rc is None:
            landed += 1
        elif rc == 0:
            finished += 1
        else:
            check("F an unkilled assert succeeds", False, f"exit {rc}: {err.strip()}")
    counts_rise = all(b > a for a, b in zip(printed, printed[1:]))
    print(f"     F: {landed} kills, {finished} runs finished, {len(printed)} assertions printed "
          f"(median run {warm * 1000:.0f} ms, kill window {window * 1000:.0f} ms)")
    check("F at least the asked number of kills landed", landed >= kills)
    check("F printed signCounts rise strictly (none reused or decreased)", counts_rise,
          [(a, b) for a, b in zip(printed, printed[1:]) if b <= a][:5])
    rc, out, err = run(store, *args())
    final = full_json(out)
    check("F the store opens and the next assertion counts above every printed one",
          rc == 0 and final is not None and (not printed or sign_count(final) > max(printed)), err)
    if final is not None:
        wasted = sign_count(final) - baseline - len(printed) - 1
        print(f"     F: {wasted} counter values taken by killed runs whose assertion never came out (allowed), none reused")


def refresh_rotation(store, kills, rng):
    def issue():
        rc, out, err = run(store, "auth", "issue", "--account", ACCOUNT, "--client-id", "app")
        if rc != 0:
            raise SystemExit(f"auth issue failed: {err}")
        return json.loads(out)["refresh_token"]

    # Timing on a throwaway chain.
    token = issue()
    times = []
    for _ in range(5):
        start = time.monotonic()
        rc, out, err = run(store, "auth", "refresh", "--", token)
        times.append(time.monotonic() - start)
        token = json.loads(out)["refresh_token"]
    window = 1.25 * statistics.median(times)

    successes = {}      # refresh token -> number of pairs it produced
    used = []           # tokens that produced a pair
    current = issue()
    landed = finished = families = reuse_refusals = 0
    families += 1
    while landed < kills:
        rc, out, err = killed_run(store, ["auth", "refresh", "--", current], rng.uniform(0, window))
        pair = full_json(out)
        if pair is not None and "refresh_token" in pair:
            successes[current] = successes.get(current, 0) + 1
            used.append(current)
            current = pair["refresh_token"]
        elif rc is None:
            # Killed before the pair came out: the token may have been spent.
            # The client's next try decides; a refused try starts a new family.
            rc2, out2, err2 = run(store, "auth", "refresh", "--", current)
            pair2 = full_json(out2)
            if rc2 == 0 and pair2 is not None:
                successes[current] = successes.get(current, 0) + 1
                used.append(current)
                current = pair2["refresh_token"]
            else:
                if "-611" in err2:
                    reuse_refusals += 1
                current = issue()
                families += 1
        elif rc != 0:
            check("R an unkilled refresh succeeds", False, f"exit {rc}: {err.strip()}")
            current = issue()
        if rc is None:
            landed += 1
        else:
            finished += 1
    print(f"     R: {landed} kills, {finished} runs finished, {len(used)} rotations, {families} families, "
          f"{reuse_refusals} spent-by-a-killed-run tokens refused as reuse (window {window * 1000:.0f} ms)")
    check("R at least the asked number of kills landed", landed >= kills)
    check("R no refresh token produced two pairs", all(n == 1 for n in successes.values()),
          [t[:8] for t, n in successes.items() if n > 1][:5])
    sample = rng.sample(used, min(len(used), 40))
    refused = [run(store, "auth", "refresh", "--", t)[0] == 1 for t in sample]
    check(f"R every spent token is refused when presented again ({len(sample)} tried)", all(refused))
    rc, out, err = run(store, "auth", "issue", "--account", ACCOUNT, "--client-id", "app")
    ok = rc == 0 and run(store, "auth", "verify", json.loads(out)["access_token"])[0] == 0
    check("R the store opens, issues and verifies", ok, err)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="kills per harness (default 200)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    print(f"     seed {seed}")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        sign_counts(os.path.join(tmp, "fido2"), args.kills, rng)
        refresh_rotation(os.path.join(tmp, "auth"), args.kills, rng)
    sys.exit(check.summary())


if __name__ == "__main__":
    main()
