#!/usr/bin/env python3
"""CPU time per operation of each cell of the PostgreSQL scale-out benchmark,
or of the durable-paths benchmark.

Runs `tokenmint-bench --filter none --no-scaling --postgres URL` (or
`--durable`), follows its progress lines, and reads the CPU time (user +
system, from /proc) of the benchmark process and of every `postgres` process
at each line: a cell's CPU is what was spent between its line and the next.
The benchmark's own rates are printed after, unchanged. Linux only; the
server must run on this machine.

    eval "$(scripts/postgres-cluster start)"
    swift build -c release --package-path Benchmarks
    python3 scripts/bench/postgres_cell_cpu.py Benchmarks/.build/release/tokenmint-bench "$TOKENMINT_POSTGRES_URL"
    python3 scripts/bench/postgres_cell_cpu.py Benchmarks/.build/release/tokenmint-bench --durable
"""
import os
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")
# Operations per cell, as the full (not --quick) run makes them.
OPERATIONS = {"verifier scale-out: ": 20_000, "durable paths: ": 8_000}


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def server_seconds():
    total = 0.0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() == "postgres":
                    total += cpu_seconds(pid)
        except OSError:
            pass
    return total


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, url = sys.argv[1:]
    target = ["--durable"] if url == "--durable" else ["--postgres", url]
    report_file = tempfile.TemporaryFile()  # the report, read after the run (a pipe could fill up)
    proc = subprocess.Popen([binary, "--filter", "none", "--no-scaling"] + target,
                            stdout=report_file, stderr=subprocess.PIPE)
    # Each progress line is "\r\x1b[K<text>": a carriage return starts a cell.
    marks, labels, text = [], [], b""
    while True:
        c = proc.stderr.read(1)
        if c in (b"\r", b""):
            now = (time.monotonic(), cpu_seconds(proc.pid), server_seconds())
            if marks:
                labels.append(text.decode(errors="replace").replace("\x1b[K", "").strip())
            marks.append(now)
            text = b""
            if not c:
                break
        else:
            text += c
    proc.wait()
    report_file.seek(0)
    report = report_file.read().decode()
    print(f"{'cell':58s} {'wall s':>7s} {'client µs/op':>13s} {'server µs/op':>13s} {'cores busy':>11s}")
    for label, (t0, c0, s0), (t1, c1, s1) in zip(labels, marks, marks[1:]):
        prefix = next((p for p in OPERATIONS if label.startswith(p)), None)
        if prefix is None or not any(word in label for word in ("insert", "INSERT", "grant", "callers")):
            continue
        client, server, wall = c1 - c0, s1 - s0, t1 - t0
        operations = OPERATIONS[prefix]
        print(f"{label[len(prefix):]:58s} {wall:7.2f} {client / operations * 1e6:13.1f} "
              f"{server / operations * 1e6:13.1f} {(client + server) / wall:11.2f}")
    print(report)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
