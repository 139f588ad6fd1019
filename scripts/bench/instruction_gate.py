#!/usr/bin/env python3
"""The regression gate that noise cannot fool: instructions per operation,
counted by valgrind's callgrind, for the benchmark's main rows.

Runs the release benchmark binary as `tokenmint-bench --instructions N` under
`valgrind --tool=callgrind`: for each row it runs TokenMint's side N times, in
ten chunks, each between a zeroing of the counters and a labelled dump
(Benchmarks/Sources/tokenmint-bench/InstructionGate.swift), and takes the
median chunk. libsodium's random bytes come from a fixed seed in that mode,
so keys and messages are the same on every run; the same binary on the same
input executes the same instructions on any machine load, and a row that
grows did more work. (OpenSSL's own random numbers, ECDSA's k and its
blinding, still vary: the median chunk absorbs them.)

The counts per operation are compared with Benchmarks/Thresholds/
instructions.json: a row more than its tolerance (3 %) above its recorded
count fails the gate, as does a recorded row that no longer runs or a new
row with no recorded count. A row that shrank by more than the tolerance is
reported so that `--update` can lock the gain in. `--update` rewrites the
file from this run, on purpose, and says what moved.

valgrind 3.19 cannot read this Swift toolchain's DWARF, so the binary is
run from a copy with its debug sections stripped (the code is the same).

    scripts/bench/instruction_gate.py [--binary PATH] [--iterations N] [--filter TEXT] [--update]

Prints one line per row, then `N passed, M failed`; exit 1 on a failure.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
THRESHOLDS = os.path.join(ROOT, "Benchmarks", "Thresholds", "instructions.json")
DEFAULT_BINARY = os.path.join(ROOT, "Benchmarks", ".build", "release", "tokenmint-bench")
LABEL = "desc: Trigger: Client Request: "


def count(binary, iterations, filter_text):
    """{row: instructions per operation} from one callgrind run."""
    with tempfile.TemporaryDirectory(prefix="tokenmint-callgrind-") as work:
        stripped = os.path.join(work, "tokenmint-bench")
        shutil.copy(binary, stripped)
        subprocess.run(["strip", "--strip-debug", stripped], check=True)
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={work}/cg.out", stripped,
                   "--instructions", str(iterations)]
        if filter_text:
            command += ["--filter", filter_text]
        proc = subprocess.run(command, capture_output=True, text=True, cwd=work)
        if proc.returncode != 0:
            sys.exit(f"callgrind run failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}\n{proc.stdout[-2000:]}")
        rows = {}
        for path in glob.glob(os.path.join(work, "cg.out*")):
            label, total = None, None
            with open(path) as f:
                for line in f:
                    if line.startswith(LABEL):
                        label = line[len(LABEL):].strip()
                    elif line.startswith("summary:") or line.startswith("totals:"):
                        total = int(line.split()[1])
            if label is None or total is None:
                continue  # the dump at program termination
            head, _, index = label.rpartition(" #")
            name, _, times = head.rpartition(" x")
            rows.setdefault(name, []).append(total / int(times))
        if not rows:
            sys.exit(f"no labelled dumps: is the binary built with valgrind's headers?\n{proc.stdout[-2000:]}")
        # The median chunk: a rare costly event in one chunk moves nothing.
        return {name: round(sorted(chunks)[len(chunks) // 2]) for name, chunks in rows.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=DEFAULT_BINARY)
    parser.add_argument("--iterations", type=int, default=None)
    parser.add_argument("--filter", default=None)
    parser.add_argument("--update", action="store_true", help="record this run's counts as the thresholds")
    args = parser.parse_args()

    recorded = {"iterations": 200, "tolerance": 0.03, "rows": {}}
    if os.path.exists(THRESHOLDS):
        with open(THRESHOLDS) as f:
            recorded = json.load(f)
    iterations = args.iterations or recorded["iterations"]
    tolerance = recorded["tolerance"]
    measured = count(args.binary, iterations, args.filter)

    passed = failed = 0
    names = sorted(set(measured) | set(recorded["rows"] if not args.filter else
                                         [n for n in recorded["rows"] if args.filter.lower() in n.lower()]))
    print(f"{'row':40} {'recorded':>12} {'now':>12} {'ratio':>7}")
    for name in names:
        before, now = recorded["rows"].get(name), measured.get(name)
        ratio = now / before if before and now else None
        line = f"{name:40} {before or '-':>12} {now or '-':>12} {f'{ratio:.3f}' if ratio else '':>7}"
        if args.update:
            print(line + ("  recorded" if now else "  dropped"))
            continue
        if now is None:
            failed += 1
            print(line + "  FAIL: the row no longer runs")
        elif before is None:
            failed += 1
            print(line + "  FAIL: no recorded count (run with --update on purpose)")
        elif ratio > 1 + tolerance:
            failed += 1
            print(line + f"  FAIL: {100 * (ratio - 1):.1f} % more instructions (tolerance {100 * tolerance:.0f} %)")
        else:
            passed += 1
            note = "  smaller: --update locks the gain in" if ratio < 1 - tolerance else ""
            print(line + "  ok" + note)
    if args.update:
        rows = dict(recorded["rows"]) if args.filter else {}
        rows.update(measured)
        os.makedirs(os.path.dirname(THRESHOLDS), exist_ok=True)
        with open(THRESHOLDS, "w") as f:
            json.dump({"iterations": iterations, "tolerance": tolerance, "rows": dict(sorted(rows.items()))}, f, indent=2)
            f.write("\n")
        print(f"wrote {os.path.relpath(THRESHOLDS, ROOT)} ({len(rows)} rows)")
        return 0
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
