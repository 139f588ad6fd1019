#!/usr/bin/env python3
"""SIGKILL harness for offline minting in TokenMint's WhitelabelPay store.

Sets up one store (pay init --offline-limit L, means add, enrol, push), then
starts `tokenmint pay mint --store DIR --offline` over and over and kills it
with SIGKILL after a random delay, until N kills have landed. Whatever full
token line a process printed before it died is kept (a token that reached
stdout counts, killed or not). Some mints between kills are left to finish.
When a mint reports the offline limit (exit 3) the harness runs
`tokenmint pay online` to reset the count and carries on; the time between two
resets is an "online epoch".

Afterwards it checks that every token verifies independently (with the
functions of scripts/interop/pay_verify.py), that no offline sequence number
appears in two tokens (and they rise in mint order), that no online epoch has
more than L tokens, that the store still opens (`pay status`) and mints, and
that its offlineMintedTokenCount is at least the number of tokens printed
since the last reset: a crash may waste slots, never reuse them.

Kill delays: half of them (--late-share) are uniform in [0, W] ms, W = 60 ms
(or 1.25x the measured run time of an un-killed mint if that is longer;
--max-delay-ms sets it outright). The other half aim at the last milliseconds
of a run, where the commit, the output and the exit are: their target tracks
the delay at which about 40% of the mints already finish. After every kill
`pay status` reads the counter (--no-probe skips this), which sorts the kills
into before the commit / after the commit but before the token was out / after
the token was out, and catches a printed token whose slot was not counted.

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
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from pay_verify import (EPOCH_SLACK, LIMIT_WORD, OFFLINE_LIMIT_EXIT,  # noqa: E402
                        TokenError, parse_enrolment, verify_payment)

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
PUSH = '{"aps":{},"yp-type":"enrolment-succeeded.v1"}'
MEANS_ID = "means-1"
MAX_LISTED = 10
LATE_MISS_RATE = 0.4     # late kills aim where this share of mints already finished
LATE_STEP_MS = 2.0
LATE_JITTER_MS = 2.0

passed = failed = 0


class Fail(Exception):
    pass


def record(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print(f"{'ok   ' if ok else 'FAIL '} {name}" + (f": {detail}" if detail else ""))
    sys.stdout.flush()
    return ok


def tail(text, n=3):
    return " | ".join(text.strip().splitlines()[-n:])[-400:]


def tm(*args, timeout=60):
    return subprocess.run([TOKENMINT, *args], capture_output=True, text=True, timeout=timeout)


def tm_ok(*args):
    p = tm(*args)
    if p.returncode != 0:
        raise Fail(f"`tokenmint {' '.join(args[:2])}` exited {p.returncode}: {tail(p.stderr)}")
    return p.stdout.strip()


def status(store):
    s = json.loads(tm_ok("pay", "status", "--store", store))
    if not isinstance(s, dict):
        raise Fail(f"status is not a JSON object: {s!r}")
    return s


def token_lines(out):
    """Full lines (ending in a newline) of stdout, plus a trailing fragment if
    there is one. Returns (lines, fragment)."""
    text = out.decode("utf-8", "replace")
    *full, rest = text.split("\n")
    return [line.strip() for line in full if line.strip()], rest.strip()


class Harness:
    def __init__(self, store, limit, key, rng, probe):
        self.store = store
        self.limit = limit
        self.key = key
        self.rng = rng
        self.probe = probe             # read the counter (pay status) after every kill
        self.window_ms = 60.0          # kill delay: uniform in [0, window_ms] ...
        self.late_ms = None            # ... or, for late_share of kills, within +-LATE_JITTER_MS of
        self.late_share = 0.0          #     late_ms, which tracks the end of a mint's run
        self.late_kills = self.late_attempts = 0
        self.epoch = 0                 # online epoch (number of resets so far)
        self.tokens = []               # (epoch, how, token) in collection order
        self.kills = 0                 # SIGKILLs that landed on a running process
        self.outcomes = dict(silent=0, printed=0, missed=0,                 # without probing
                             before_commit=0, after_commit_silent=0, after_output=0)
        self.unkilled = 0
        self.unkilled_times = []
        self.resets = []               # (epoch, counter before reset, tokens in epoch)
        self.problems = []             # unexpected exits and output
        self.counter_problems = []     # what the probes after kills found wrong
        self.flagged_epochs = set()
        self.fragments = 0             # partial last lines of killed processes, dropped
        self.kept_fragments = 0        # ... or kept because they were whole, valid tokens
        self.expected = 0              # counter implied by the last probe and the mints since
        self.probes = 0
        self.max_waste_per_kill = 0

    def cmd(self):
        return [TOKENMINT, "pay", "mint", "--store", self.store, "--offline"]

    def tokens_in_epoch(self, epoch):
        return sum(1 for e, _, _ in self.tokens if e == epoch)

    def counter(self):
        c = status(self.store).get("offlineMintedTokenCount")
        if not isinstance(c, int):
            raise Fail(f"status has no integer offlineMintedTokenCount: {c!r}")
        self.probes += 1
        return c

    def collect(self, out, how, killed):
        """Keep the tokens in a mint's stdout; returns how many."""
        lines, fragment = token_lines(out)
        for line in lines:
            self.tokens.append((self.epoch, how, line))
        if fragment:
            # A killed process may stop mid-line. Keep the fragment only if it
            # is a whole token that verifies (stricter for the uniqueness checks).
            try:
                verify_payment(fragment, self.key)
                self.tokens.append((self.epoch, how + " (no newline)", fragment))
                self.kept_fragments += 1
                return len(lines) + 1
            except TokenError:
                if not killed:
                    self.problems.append(f"{how}: stray output {fragment[:80]!r}")
                self.fragments += 1
        return len(lines)

    def finished(self, rc, out, err, how):
        """Handle a mint that exited on its own. Returns its exit status."""
        if rc == 0:
            if self.probe and self.expected >= self.limit:
                self.problems.append(f"{how}: minted with the counter already at {self.expected} "
                                     f"(limit {self.limit})")
            n = self.collect(out, how, killed=False)
            if n != 1:
                self.problems.append(f"{how}: exit 0 with {n} token lines")
            self.expected += 1
            return rc
        if rc == OFFLINE_LIMIT_EXIT:
            text = err.decode("utf-8", "replace")
            if LIMIT_WORD not in text:
                self.problems.append(f"{how}: exit 3 without {LIMIT_WORD} on stderr: {tail(text)!r}")
            if out.strip():
                self.problems.append(f"{how}: exit 3 with stdout {out[:80]!r}")
            self.reset()
            return rc
        self.problems.append(f"{how}: exit {rc}: {tail(err.decode('utf-8', 'replace'))}")
        return rc

    def reset(self):
        c = self.counter()
        n = self.tokens_in_epoch(self.epoch)
        self.resets.append((self.epoch, c, n))
        if c < self.limit:
            self.problems.append(f"epoch {self.epoch}: limit reported with the counter at {c} < {self.limit}")
        tm_ok("pay", "online", "--store", self.store)
        self.epoch += 1
        self.expected = self.counter()
        if self.expected != 0:
            self.problems.append(f"after online the counter is {self.expected}, not 0")

    def unkilled_mint(self):
        t0 = time.monotonic()
        p = subprocess.run(self.cmd(), capture_output=True, timeout=60)
        self.unkilled_times.append(time.monotonic() - t0)
        self.unkilled += 1
        return self.finished(p.returncode, p.stdout, p.stderr, "un-killed")

    def delay(self):
        """(seconds, late?) for the next kill."""
        if self.late_ms is not None and self.rng.random() < self.late_share:
            ms = self.late_ms + self.rng.uniform(-LATE_JITTER_MS, LATE_JITTER_MS)
            return max(ms, 0.0) / 1000, True
        return self.rng.uniform(0, self.window_ms) / 1000, False

    def track_late(self, killed):
        # Stochastic quantile tracking: late_ms settles where a share
        # LATE_MISS_RATE of the mints finish before the kill, i.e. in the last
        # milliseconds of a run, where the commit, the output and the exit are.
        self.late_attempts += 1
        self.late_kills += killed
        step = LATE_STEP_MS * ((-(1 - LATE_MISS_RATE)) if not killed else LATE_MISS_RATE)
        self.late_ms = min(max(self.late_ms + step, 1.0), 10 * self.window_ms)

    def killed_mint(self):
        delay, late = self.delay()
        p = subprocess.Popen(self.cmd(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)      # no-op if it already exited (Popen polls first)
        out, err = p.communicate(timeout=60)
        if late:
            self.track_late(p.returncode == -signal.SIGKILL)
        if p.returncode != -signal.SIGKILL:
            self.outcomes["missed"] += 1
            self.finished(p.returncode, out, err, "finished before the kill")
            return
        self.kills += 1
        n = self.collect(out, "killed", killed=True)
        self.outcomes["printed" if n else "silent"] += 1
        if not self.probe:
            return
        # Where did the kill land? The counter tells commit or not.
        c = self.counter()
        delta = c - self.expected
        self.expected = c
        if delta < 0:
            self.counter_problems.append(f"kill #{self.kills}: the counter went back from {c - delta} to {c}")
        elif n > delta:
            self.counter_problems.append(f"kill #{self.kills}: printed {n} token(s) but the counter rose by {delta} "
                                 f"(a slot that can be handed out again)")
        if delta > 0:
            self.outcomes["after_output" if n else "after_commit_silent"] += 1
            self.max_waste_per_kill = max(self.max_waste_per_kill, delta - n)
        else:
            self.outcomes["before_commit"] += 1
        since = self.tokens_in_epoch(self.epoch)
        if c < since and self.epoch not in self.flagged_epochs:
            self.flagged_epochs.add(self.epoch)
            self.counter_problems.append(f"kill #{self.kills}: counter {c} < {since} tokens since the reset")

    def at_limit(self):
        return self.probe and self.expected >= self.limit


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=200, help="SIGKILLs to land (default 200)")
    ap.add_argument("--limit", type=int, default=40, help="offline token limit (default 40)")
    ap.add_argument("--max-delay-ms", type=float,
                    help="kill delay window W in ms (default: 60, or 1.25x an un-killed mint if longer)")
    ap.add_argument("--late-share", type=float, default=0.5,
                    help="share of kills aimed at the end of a mint's run, where it commits and prints "
                         "(default 0.5; 0 = every delay uniform in [0, W])")
    ap.add_argument("--no-probe", action="store_true",
                    help="do not read the counter (pay status) after each kill; faster, but the kills "
                         "are not sorted into before/after the commit")
    ap.add_argument("--unkilled-every", type=int, default=5,
                    help="on average one un-killed mint per this many kills (default 5)")
    ap.add_argument("--seed", type=int, help="random seed (default: random, printed)")
    ap.add_argument("--max-seconds", type=float, default=240, help="stop after this long (default 240)")
    ap.add_argument("--keep", metavar="DIR", help="use DIR (must not exist) as the store and keep it")
    args = ap.parse_args()
    if args.kills < 1 or args.limit < 1:
        ap.error("--kills and --limit must be at least 1")

    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1

    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    print(f"# seed {seed}, kills {args.kills}, limit {args.limit}")

    with tempfile.TemporaryDirectory(prefix="tokenmint-paykill-") as tmp:
        store = args.keep or os.path.join(tmp, "store")
        try:
            run(store, args, rng)
        except (Fail, subprocess.TimeoutExpired, json.JSONDecodeError, TokenError) as e:
            record(False, "harness stopped", str(e))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


def run(store, args, rng):
    limit = args.limit
    tm_ok("pay", "init", "--store", store, "--tenant", str(uuid.uuid4()),
          "--reference", str(uuid.uuid4()), "--offline-limit", str(limit))
    tm_ok("pay", "means", "add", "--store", store, MEANS_ID)
    enrolment = parse_enrolment(tm_ok("pay", "enrol", "--store", store))
    tm_ok("pay", "push", "--store", store, PUSH)

    h = Harness(store, limit, enrolment["public_key"], rng, probe=not args.no_probe)
    t_start = time.time()
    mono_start = time.monotonic()

    # Calibrate: a few un-killed mints (their tokens count like any other).
    for _ in range(3):
        h.unkilled_mint()
    typical_ms = 1000 * statistics.median(h.unkilled_times)
    h.window_ms = args.max_delay_ms if args.max_delay_ms is not None else max(60.0, 1.25 * typical_ms)
    h.late_ms = 0.9 * typical_ms
    h.late_share = min(max(args.late_share, 0.0), 1.0)
    print(f"# an un-killed mint takes ~{typical_ms:.0f} ms; kill delay uniform in [0, {h.window_ms:.0f}] ms"
          + (f", or for {100 * h.late_share:.0f}% of kills aimed at the end of a run" if h.late_share else ""))

    attempts = 0
    max_attempts = 50 * args.kills
    timed_out = False
    while h.kills < args.kills:
        if time.monotonic() - mono_start > args.max_seconds:
            timed_out = True
            break
        if attempts >= max_attempts:
            break
        attempts += 1
        if h.at_limit() or rng.random() < 1.0 / max(1, args.unkilled_every):
            h.unkilled_mint()      # at the limit this is the mint that must exit 3
        h.killed_mint()
        if len(h.problems) + len(h.counter_problems) > 50:
            break

    # One more mint that is left to finish: the store must still work.
    alive_detail = ""
    try:
        p = subprocess.run(h.cmd(), capture_output=True, timeout=60)
        if p.returncode == OFFLINE_LIMIT_EXIT:
            h.finished(p.returncode, p.stdout, p.stderr, "final")
            p = subprocess.run(h.cmd(), capture_output=True, timeout=60)
        alive_ok = p.returncode == 0
        if alive_ok:
            h.collect(p.stdout, "final", killed=False)
        else:
            alive_detail = f"exit {p.returncode}: {tail(p.stderr.decode('utf-8', 'replace'))}"
    except (Fail, subprocess.TimeoutExpired) as e:
        alive_ok, alive_detail = False, str(e)
    elapsed = time.monotonic() - mono_start
    t_end = time.time()

    # ---- figures
    since_reset = h.tokens_in_epoch(h.epoch)
    try:
        final = status(store)
        status_err = None
    except (Fail, json.JSONDecodeError, subprocess.TimeoutExpired) as e:
        final, status_err = None, str(e)
    counter = final.get("offlineMintedTokenCount") if final else None
    wasted_before = sum(c - n for _, c, n in h.resets if isinstance(c, int))
    wasted_now = counter - since_reset if isinstance(counter, int) else None

    o = h.outcomes
    print(f"kills landed:          {h.kills} of {attempts} kill attempts "
          f"({o['silent']} before any output, {o['printed']} after printing a token; "
          f"{o['missed']} more mints finished before the kill)")
    if h.probe:
        print(f"where they landed:     {o['before_commit']} before the commit, "
              f"{o['after_commit_silent']} after the commit but before the token was out, "
              f"{o['after_output']} after the token was out "
              f"(by the counter; {h.probes} status probes)")
    if h.late_attempts:
        print(f"late kills:            {h.late_kills} of {h.late_attempts} landed; "
              f"the end of a run was tracked at ~{h.late_ms:.0f} ms after the start")
    print(f"un-killed mints:       {h.unkilled}")
    print(f"tokens collected:      {len(h.tokens)} "
          f"({sum(1 for _, how, _ in h.tokens if how.startswith('killed'))} from killed processes)")
    print(f"online resets:         {len(h.resets)}  (counter/tokens per finished epoch: "
          + (", ".join(f"{c}/{n}" for _, c, n in h.resets[:12]) or "-")
          + (", ..." if len(h.resets) > 12 else "") + ")")
    print(f"since the last reset:  counter {counter}, tokens {since_reset}")
    print(f"wasted slots:          {wasted_now} now, {wasted_before} in finished epochs")
    if h.fragments or h.kept_fragments:
        print(f"partial last lines:    {h.fragments} dropped, {h.kept_fragments} kept (whole valid tokens)")
    print(f"elapsed:               {elapsed:.1f} s")

    # ---- checks
    record(h.kills >= args.kills and not timed_out, f"{args.kills} kills landed",
           f"{h.kills} in {attempts} attempts" + (" (stopped by --max-seconds)" if timed_out else ""))

    record(not h.problems, "no unexpected mint exits or output",
           "; ".join(h.problems[:MAX_LISTED]) + (f" (+{len(h.problems) - MAX_LISTED} more)"
                                                 if len(h.problems) > MAX_LISTED else ""))

    if h.probe:
        cp = h.counter_problems
        record(not cp, "the counter after every kill covers every token out",
               f"{h.probes} probes" if not cp else "; ".join(cp[:MAX_LISTED])
               + (f" (+{len(cp) - MAX_LISTED} more)" if len(cp) > MAX_LISTED else ""))

    bad, seqs = [], []
    for i, (epoch, how, tok) in enumerate(h.tokens):
        try:
            p = verify_payment(tok, h.key)
            if p["offline"] is None:
                raise TokenError(f"not an offline token: unsigned {p['unsigned']!r}")
            means_id, seq, _ = p["offline"]
            if means_id != MEANS_ID:
                raise TokenError(f"means ID {means_id!r}, want {MEANS_ID!r}")
            if not t_start - EPOCH_SLACK <= p["epoch"] <= t_end + EPOCH_SLACK:
                raise TokenError(f"epoch {p['epoch']} outside the run (+-{EPOCH_SLACK} s)")
            seqs.append((seq, i, how))
        except TokenError as e:
            bad.append(f"#{i} ({how}): {e}")
    record(not bad and bool(h.tokens), "every token verifies independently",
           f"{len(h.tokens) - len(bad)}/{len(h.tokens)}" + ("; " + "; ".join(bad[:MAX_LISTED]) if bad else ""))

    by_seq = {}
    for seq, i, how in seqs:
        by_seq.setdefault(seq, []).append(f"#{i} {how}")
    dups = {s: w for s, w in by_seq.items() if len(w) > 1}
    record(not dups, "no offline sequence number in two tokens",
           f"{len(by_seq)} distinct" if not dups else
           "; ".join(f"seq {s}: {', '.join(w)}" for s, w in list(dups.items())[:MAX_LISTED]))

    order = [s for s, _, _ in seqs]
    falls = [(a, b) for a, b in zip(order, order[1:]) if b <= a]
    record(not falls, "sequence numbers rise in mint order",
           f"{order[0]}..{order[-1]}" if order and not falls else f"drops: {falls[:MAX_LISTED]}")

    per_epoch = {}
    for epoch, _, _ in h.tokens:
        per_epoch[epoch] = per_epoch.get(epoch, 0) + 1
    over = {e: n for e, n in per_epoch.items() if n > args.limit}
    record(not over, f"at most {args.limit} tokens per online epoch",
           f"max {max(per_epoch.values(), default=0)} over {len(per_epoch)} epochs" if not over else
           ", ".join(f"epoch {e}: {n}" for e, n in over.items()))

    record(final is not None, "pay status opens the store afterwards",
           status_err or f"state={final.get('state')!r}, counter {counter}, "
                         f"available {final.get('availableOfflineTokensCount')}")

    record(alive_ok, "the store still mints after the run", alive_detail)

    ok = isinstance(counter, int) and counter >= since_reset
    record(ok, "offlineMintedTokenCount >= tokens printed since the last reset",
           f"{counter} >= {since_reset}" if ok else f"counter {counter!r}, tokens {since_reset}")

    stale = [(e, c, n) for e, c, n in h.resets if not isinstance(c, int) or c < n]
    record(not stale, "the counter covered the tokens in every finished epoch too",
           f"{len(h.resets)} resets" if not stale else f"epoch/counter/tokens {stale[:MAX_LISTED]}")


if __name__ == "__main__":
    sys.exit(main())
