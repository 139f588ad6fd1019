#!/usr/bin/env python3
"""Decode every Aztec symbol TokenMint draws with an independent reader.

TokenMint draws Aztec codes with libzint; this script proves that they decode
back to the exact payload bytes with zxing-cpp (an independent decoder):

  1. `tokenmint aztec sweep --out TMP [--levels ...] [--step N] [--seed S]`
     writes PNGs plus TMP/manifest.json into a temporary directory;
  2. each PNG listed in the manifest is loaded with Pillow and decoded with
     zxing-cpp: exactly one Aztec result whose bytes equal the payload, with
     the layer count (zxing-cpp's "Version"), the symbol size in modules (from
     the corners zxing-cpp reports), and the error-correction share (its
     "ECLevel") agreeing with the manifest; the PNG itself must be
     (size + 2*4) * 2 pixels square (quiet zone 4 modules, scale 2);
  3. a few `tokenmint aztec --format json` outputs are turned into images here
     from their module strings (scale 4, quiet zone 4) and decoded the same
     way, which checks the JSON form independently of TokenMint's PNG writer.

Prints one line per ECC level, up to 20 failures, and ends with
`N passed, M failed` (exit 1 if anything failed).

The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
  --levels 1,2 --step 50   quicker run (passed through to the sweep)
  --from-dir DIR           check an existing sweep directory instead of
                           running the sweep (DIR/manifest.json)
  --keep DIR               run the sweep into DIR and keep it
  --skip-json              skip the --format json checks
"""
import argparse
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import zxingcpp
from PIL import Image

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
QUIET = 4          # quiet zone in modules, PNG and JSON images alike
PNG_SCALE = 2      # pixels per module in the sweep's PNGs
JSON_SCALE = 4     # pixels per module when we draw a --format json symbol
MAX_LISTED = 20    # failures printed in detail

passed = failed = 0


class Fail(Exception):
    pass


# ---- Aztec geometry (ISO/IEC 24778) ------------------------------------------

def aztec_size(layers, compact):
    """Side of an Aztec symbol in modules, reference grid included."""
    if compact:
        return 11 + 4 * layers
    base = 14 + 4 * layers
    return base + 1 + 2 * ((base // 2 - 1) // 15)


# ---- zxing-cpp -----------------------------------------------------------------

def decode(img):
    """All Aztec symbols zxing-cpp finds in a PIL image (converted to 8-bit grey)."""
    if img.mode != "L":
        img = img.convert("L")
    return zxingcpp.read_barcodes(img, formats=zxingcpp.BarcodeFormat.Aztec)


def _int_prefix(value):
    m = re.match(r"\s*(\d+)", str(value or ""))
    return int(m.group(1)) if m else None


def zx_facts(result, scale):
    """What zxing-cpp says about a symbol: layers, ECC % (truncated), side in modules."""
    extra = getattr(result, "extra", None)
    extra = extra if isinstance(extra, dict) else {}
    layers = _int_prefix(extra.get("Version"))
    ecc = _int_prefix(extra.get("ECLevel") or getattr(result, "ec_level", ""))
    p = result.position
    width = math.hypot(p.top_right.x - p.top_left.x, p.top_right.y - p.top_left.y) / scale
    height = math.hypot(p.bottom_left.x - p.top_left.x, p.bottom_left.y - p.top_left.y) / scale
    return layers, ecc, width, height


def diff_at(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def check_decoded(img, payload, layers, size, scale, ecc=None):
    """Problems (list of str) with decoding `img`; empty when all checks pass.
    Returns (problems, bytes_ok)."""
    problems = []
    results = decode(img)
    if len(results) != 1:
        return [f"zxing-cpp found {len(results)} Aztec symbols, want 1"], False
    r = results[0]
    got = r.bytes
    bytes_ok = got == payload
    if not bytes_ok:
        problems.append(f"decoded {len(got)} bytes, want {len(payload)}; first difference at "
                        f"offset {diff_at(got, payload)} (got {got[:24].hex()}..)")
    zl, zecc, w, h = zx_facts(r, scale)
    if zl is not None and zl != layers:
        problems.append(f"zxing-cpp reads {zl} layers, want {layers}")
    # The corners are module-exact on an upright synthetic image; allow half a module.
    if abs(w - size) > 0.55 or abs(h - size) > 0.55:
        problems.append(f"zxing-cpp measures {w:.1f}x{h:.1f} modules, want {size}x{size}")
    if zecc is not None and ecc is not None and not (zecc - 0.05 <= ecc <= zecc + 1.05):
        # zxing-cpp truncates 100*(total-data)/total to an integer
        problems.append(f"zxing-cpp reads ECC {zecc}%, TokenMint says {ecc:.1f}%")
    return problems, bytes_ok


# ---- the sweep -----------------------------------------------------------------

def run_sweep(out, args):
    cmd = [TOKENMINT, "aztec", "sweep", "--out", out]
    if args.levels:
        cmd += ["--levels", args.levels]
    if args.step is not None:
        cmd += ["--step", str(args.step)]
    if args.seed is not None:
        cmd += ["--seed", str(args.seed)]
    print("# sweep: tokenmint " + " ".join(cmd[1:3] + ["--out", "DIR"] + cmd[5:]))
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        raise Fail(f"`tokenmint aztec sweep` exited {p.returncode}: {tail[-400:]}")
    return time.monotonic() - t0


def load_manifest(directory):
    path = os.path.join(directory, "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise Fail(f"cannot read manifest.json: {e}")
    symbols = doc.get("symbols") if isinstance(doc, dict) else None
    if not isinstance(symbols, list) or not symbols:
        raise Fail("manifest.json has no \"symbols\" list (or it is empty)")
    return symbols


def check_entry(entry, directory):
    """(problems, bytes_ok, info) for one manifest entry."""
    try:
        name = entry["file"]
        payload = bytes.fromhex(entry["payloadHex"])
        level, kind = int(entry["level"]), entry["kind"]
        compact, layers, size = bool(entry["compact"]), int(entry["layers"]), int(entry["size"])
        ecc = entry.get("eccPercent")
        ecc = float(ecc) if ecc is not None else None
    except (KeyError, TypeError, ValueError) as e:
        return [f"bad manifest entry ({type(e).__name__}: {e})"], False, None
    info = dict(file=name, length=len(payload), kind=kind, compact=compact, layers=layers, level=level)
    problems = []
    if kind not in ("binary", "text"):
        problems.append(f"kind {kind!r} is neither binary nor text")
    if kind == "text" and not all(0x20 <= b < 0x7F for b in payload):
        problems.append("text payload is not printable ASCII")
    if size != aztec_size(layers, compact):
        problems.append(f"manifest size {size} does not match {layers} "
                        f"{'compact' if compact else 'full-range'} layers "
                        f"({aztec_size(layers, compact)})")
    try:
        with Image.open(os.path.join(directory, name)) as im:
            im.load()
            img = im
    except OSError as e:
        return problems + [f"cannot open PNG: {e}"], False, info
    want_px = (size + 2 * QUIET) * PNG_SCALE
    if img.size != (want_px, want_px):
        problems.append(f"PNG is {img.size[0]}x{img.size[1]} px, want {want_px}x{want_px} "
                        f"(size {size} + quiet zone {QUIET}, scale {PNG_SCALE})")
    if img.mode not in ("1", "P") or (img.mode == "P" and img.getcolors(2) is None):
        problems.append(f"PNG is not 1-bit (Pillow mode {img.mode})")
    more, bytes_ok = check_decoded(img, payload, layers, size, PNG_SCALE, ecc)
    return problems + more, bytes_ok, info


def check_coverage(symbols, levels):
    """The sweep contract: every requested level has binary and text symbols;
    every compact layer count 1-4 and some full-range symbols appear."""
    problems = []
    seen_levels = {}
    compact_layers, full = set(), 0
    for e in symbols:
        try:
            seen_levels.setdefault(int(e["level"]), set()).add(e["kind"])
            if e["compact"]:
                compact_layers.add(int(e["layers"]))
            else:
                full += 1
        except (KeyError, TypeError, ValueError):
            continue
    for lv in levels:
        kinds = seen_levels.get(lv, set())
        if not {"binary", "text"} <= kinds:
            problems.append(f"level {lv} has kinds {sorted(kinds) or 'none'}, want binary and text")
    missing = sorted({1, 2, 3, 4} - compact_layers)
    if missing:
        problems.append(f"no compact symbol with {', '.join(map(str, missing))} layer(s)")
    if not full:
        problems.append("no full-range symbol")
    return problems


# ---- --format json ---------------------------------------------------------------

def image_from_modules(modules, scale=JSON_SCALE, quiet=QUIET):
    """8-bit grey image (dark = 0) from rows of '0'/'1' characters (1 = dark)."""
    rows, cols = len(modules), len(modules[0])
    width = (cols + 2 * quiet) * scale
    white_row = b"\xff" * width
    out = bytearray(white_row * (quiet * scale))
    side = b"\xff" * (quiet * scale)
    for row in modules:
        line = side + b"".join((b"\x00" if c == "1" else b"\xff") * scale for c in row) + side
        out += line * scale
    out += white_row * (quiet * scale)
    return Image.frombytes("L", (width, (rows + 2 * quiet) * scale), bytes(out))


def json_cases():
    rng = random.Random(24778)
    printable = "".join(chr(c) for c in range(0x20, 0x7F))
    text = lambda n: "".join(rng.choice(printable) for _ in range(n)).lstrip("-") or "x"
    token = ("02/" + "3f2c9a1e-7b4d-4c8e-9f01-2a3b4c5d6e7f" + "/1763776800/"
             + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
                       for _ in range(86)) + "==")
    return [
        # (label, extra CLI flags, payload, "text" | "hex" | "in")
        ("text, auto size, level 2", ["--level", "2"], b"TokenMint Aztec 0123456789", "text"),
        ("payment token, level 2", ["--level", "2"], token.encode(), "text"),
        ("random text 200, level 3", ["--level", "3"], text(200).encode(), "text"),
        ("binary 90 B via --hex, level 1", ["--level", "1"], rng.randbytes(90), "hex"),
        ("binary 300 B via --hex, level 2", ["--level", "2"], rng.randbytes(300), "hex"),
        # 1,000 random bytes need more bits than a level-4 symbol holds in zint (it spends ~35 % more
        # bits than ZXing on binary), so this case uses level 3.
        ("binary 1000 B via --in, level 3", ["--level", "3"], rng.randbytes(1000), "in"),
        ("compact 1 layer", ["--compact", "--layers", "1"], b"A1", "text"),
        ("compact 4 layers, level 4", ["--level", "4", "--compact", "--layers", "4"],
         b"01/enrolment", "text"),
        ("full 12 layers, text", ["--level", "2", "--layers", "12"], text(120).encode(), "text"),
    ]


def check_json_case(flags, payload, how, tmp):
    if how == "hex":
        src = ["--hex", payload.hex()]
    elif how == "in":
        path = os.path.join(tmp, "json-payload.bin")
        with open(path, "wb") as f:
            f.write(payload)
        src = ["--in", path]
    else:
        src = [payload.decode("ascii")]
    p = subprocess.run([TOKENMINT, "aztec", "--format", "json", *flags, *src],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        tail = " | ".join(p.stderr.strip().splitlines()[-3:])
        raise Fail(f"`tokenmint aztec --format json` exited {p.returncode}: {tail[-300:]}")
    try:
        doc = json.loads(p.stdout)
        modules = doc["modules"]
        rows, cols = int(doc["rows"]), int(doc["columns"])
        layers, compact = int(doc["layers"]), bool(doc["compact"])
    except (ValueError, KeyError, TypeError) as e:
        raise Fail(f"unexpected JSON ({type(e).__name__}: {e}): {p.stdout[:120]!r}")
    summary = f"{rows}x{cols}, {layers} layers, {'compact' if compact else 'full'}, ecc {doc.get('ecc')}%"
    if not (isinstance(modules, list) and len(modules) == rows and rows == cols
            and all(isinstance(m, str) and len(m) == cols and set(m) <= {"0", "1"} for m in modules)):
        raise Fail(f"{summary}: modules is not {rows} strings of {cols} '0'/'1' characters (square)")
    problems = []
    if rows != aztec_size(layers, compact):
        problems.append(f"{rows} rows does not match {layers} {'compact' if compact else 'full-range'} "
                        f"layers ({aztec_size(layers, compact)})")
    if "--layers" in flags:
        want_layers = int(flags[flags.index("--layers") + 1])
        if layers != want_layers or compact != ("--compact" in flags):
            problems.append(f"asked for {want_layers} {'compact' if '--compact' in flags else 'full-range'} "
                            f"layers")
    ecc = doc.get("ecc")
    ecc = float(ecc) if isinstance(ecc, (int, float)) and not isinstance(ecc, bool) else None
    more, _ = check_decoded(image_from_modules(modules), payload, layers, rows, JSON_SCALE, ecc)
    problems += more
    if problems:
        raise Fail(f"{summary}: " + "; ".join(problems))
    return summary


# ---- main ----------------------------------------------------------------------

def count(ok):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1


def parse_levels(text):
    try:
        levels = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        levels = []
    if not levels or any(not 1 <= lv <= 4 for lv in levels):
        raise argparse.ArgumentTypeError(f"--levels wants a list of 1-4 like 1,2,3,4, not {text!r}")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--levels", type=parse_levels, help="ECC levels for the sweep, e.g. 1,2 (default: the CLI's)")
    ap.add_argument("--step", type=int, help="payload length step for the sweep (default: the CLI's)")
    ap.add_argument("--seed", help="random seed for the sweep (default: the CLI's)")
    ap.add_argument("--from-dir", metavar="DIR", help="check an existing sweep directory; do not run the sweep")
    ap.add_argument("--keep", metavar="DIR", help="run the sweep into DIR and keep it")
    ap.add_argument("--skip-json", action="store_true", help="skip the --format json checks")
    args = ap.parse_args()

    need_cli = not (args.from_dir and args.skip_json)
    if need_cli and not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"FAIL  tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        print("0 passed, 1 failed")
        return 1

    with tempfile.TemporaryDirectory(prefix="tokenmint-aztec-") as tmp:
        if args.from_dir:
            directory = args.from_dir
            print(f"# checking the sweep in {directory}")
        else:
            directory = args.keep or os.path.join(tmp, "sweep")
            os.makedirs(directory, exist_ok=True)
        failures = []
        try:
            if not args.from_dir:
                secs = run_sweep(directory, args)
                print(f"# sweep took {secs:.1f} s")
            symbols = load_manifest(directory)
        except (Fail, subprocess.TimeoutExpired) as e:
            print(f"FAIL  sweep: {e}")
            count(False)
            symbols = []

        # (b), (c): decode every PNG in the manifest
        per_level = {}  # level -> [symbols, decoded exactly]
        t0 = time.monotonic()
        for entry in symbols:
            problems, bytes_ok, info = check_entry(entry, directory)
            if info is None:
                info = dict(file=str(entry.get("file", "?")) if isinstance(entry, dict) else "?",
                            length="?", kind="?", compact=None, layers="?", level="?")
            stats = per_level.setdefault(info["level"], [0, 0])
            stats[0] += 1
            stats[1] += bytes_ok
            count(not problems)
            if problems:
                failures.append((info, problems))
        secs = time.monotonic() - t0
        for level in sorted(per_level, key=str):
            n, ok = per_level[level]
            print(f"level {level}: {n} symbols, {ok} decoded exactly")
        if symbols:
            print(f"# decoded {len(symbols)} PNGs in {secs:.1f} s "
                  f"({1000 * secs / len(symbols):.1f} ms each)")
            want_levels = ([int(x) for x in args.levels.split(",") if x.strip()] if args.levels
                           else sorted({lv for lv in per_level if isinstance(lv, int)}))
            cov = check_coverage(symbols, want_levels)
            count(not cov)
            print("coverage: " + ("ok (both kinds per level, compact layers 1-4, full-range symbols)"
                                  if not cov else "FAIL  " + "; ".join(cov)))

        if failures:
            print(f"failures ({min(len(failures), MAX_LISTED)} of {len(failures)} shown):")
            for info, problems in failures[:MAX_LISTED]:
                shape = ("?" if info["compact"] is None
                         else f"{'compact' if info['compact'] else 'full'}/{info['layers']}")
                print(f"  {info['file']}  len {info['length']}  {info['kind']}  {shape}  "
                      f"level {info['level']}: {'; '.join(problems)}")

        # (d): --format json, drawn here from the module strings
        if not args.skip_json:
            print("# --format json, drawn from the module strings (scale 4, quiet zone 4)")
            for label, flags, payload, how in json_cases():
                try:
                    summary = check_json_case(flags, payload, how, tmp)
                    print(f"ok    json {label}: {summary}")
                    count(True)
                except (Fail, subprocess.TimeoutExpired) as e:
                    print(f"FAIL  json {label}: {e}")
                    count(False)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
