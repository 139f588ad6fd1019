#!/usr/bin/env python3
"""Compare Aztec symbol sizes: TokenMint (libzint) vs an independent encoder.

For a few typical token strings and random binary payloads, prints the symbol
TokenMint draws (`tokenmint aztec --format json --level L ...`) next to the one
aztec_code_generator (pure Python, no zint inside) makes at the same error
correction, and the difference. Both symbols are also decoded with zxing-cpp
as a sanity check (TokenMint's from its JSON module strings).

ECC: TokenMint's --level 1-4 is zint's Aztec ECC level, 10/23/36/50 % of the
symbol plus 3 codewords; aztec_code_generator's `ec_percent` is the same rule
((data codewords + 3) must fit in (100 - ec_percent) % of the symbol), so the
comparison is at the same setting. Default level 2 (23 %, the ISO
recommendation and both encoders' default).

A report: exits 0 unless a tool call (tokenmint) fails.
The CLI is taken from $TOKENMINT (default .build/debug/tokenmint).
"""
import argparse
import base64
import importlib.metadata
import json
import os
import random
import subprocess
import sys
import uuid

import aztec_code_generator as azgen

try:
    import zxingcpp
    from PIL import Image
except ImportError:  # the report works without the decode check
    zxingcpp = None

TOKENMINT = os.environ.get("TOKENMINT", ".build/debug/tokenmint")
EC_PERCENT = {1: 10, 2: 23, 3: 36, 4: 50}   # zint's Aztec ECC levels


def dist_version(*names):
    for name in names:
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "aztec_code_generator (version unknown)"


# ---- payloads ------------------------------------------------------------------

def b64url(data, pad):
    s = base64.urlsafe_b64encode(data).decode("ascii")
    return s if pad else s.rstrip("=")


def uuid_like(rng):
    return str(uuid.UUID(bytes=rng.randbytes(16), version=4))


def compact_jws(rng, total):
    """An EdDSA-ish compact JWS (JWT) of exactly `total` characters."""
    sig = b64url(rng.randbytes(64), pad=False)  # 86 characters
    sub = uuid_like(rng)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    for kid_len in range(0, 4):  # unpadded base64url skips lengths = 1 mod 4
        head = {"alg": "EdDSA", "typ": "JWT", **({"kid": "k" * kid_len} if kid_len else {})}
        header = b64url(json.dumps(head, separators=(",", ":")).encode(), pad=False)
        for jti_len in range(1, total):
            claims = {"iss": "pay.example", "sub": sub, "iat": 1763773200, "exp": 1763776800,
                      "jti": "".join(rng.choice(alphabet) for _ in range(jti_len))}
            body = b64url(json.dumps(claims, separators=(",", ":")).encode(), pad=False)
            jws = f"{header}.{body}.{sig}"
            if len(jws) == total:
                return jws
            if len(jws) > total:
                break
    raise SystemExit(f"cannot build a {total}-character JWS")


def payloads(seed):
    rng = random.Random(seed)
    payment = f"02/{uuid_like(rng)}/1763776800/{b64url(rng.randbytes(64), pad=True)}"
    enrol = f"01/{uuid_like(rng)}/{b64url(rng.randbytes(32), pad=True)}/{uuid_like(rng)}"
    assert len(b64url(bytes(64), pad=True)) == 88 and len(payment) == 139, payment
    return [
        ("payment token (02/...)", payment.encode(), "text"),
        ("enrolment token (01/...)", enrol.encode(), "text"),
        ("compact JWS, EdDSA", compact_jws(rng, 300).encode(), "text"),
        ("random binary", rng.randbytes(90), "binary"),
        ("random binary", rng.randbytes(300), "binary"),
    ]


# ---- encoders ------------------------------------------------------------------

def codeword_bits(layers, compact):
    """Bits per codeword (ISO/IEC 24778 table 1)."""
    if layers <= 2:
        return 6
    if compact or layers <= 8:
        return 8
    return 10 if layers <= 22 else 12


class ToolFailed(Exception):
    pass


def tokenmint_symbol(payload, kind, level):
    src = ["--hex", payload.hex()] if kind == "binary" else [payload.decode("ascii")]
    cmd = [TOKENMINT, "aztec", "--format", "json", "--level", str(level), *src]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolFailed(f"tokenmint: {e}")
    if p.returncode != 0:
        tail = " | ".join(p.stderr.strip().splitlines()[-2:])
        raise ToolFailed(f"tokenmint exited {p.returncode}: {tail[-200:]}")
    try:
        doc = json.loads(p.stdout)
        sym = dict(rows=int(doc["rows"]), cols=int(doc["columns"]), layers=int(doc["layers"]),
                   compact=bool(doc["compact"]), modules=doc.get("modules"))
        if isinstance(doc.get("dataCodewords"), int):
            sym["data_bits"] = doc["dataCodewords"] * codeword_bits(sym["layers"], sym["compact"])
        return sym
    except (ValueError, KeyError, TypeError) as e:
        raise ToolFailed(f"tokenmint printed unexpected JSON ({e}): {p.stdout[:100]!r}")


def independent_symbol(payload, level):
    """aztec_code_generator's automatically sized symbol; raw bytes in, no ECI."""
    code = azgen.AztecCode(payload, ec_percent=EC_PERCENT[level])
    cfg = azgen.configs[(code.size, code.compact)]
    modules = ["".join("1" if v else "0" for v in row) for row in code.matrix]
    sym = dict(rows=code.size, cols=code.size, layers=cfg.layers, compact=code.compact,
               modules=modules)
    try:  # data codewords after bit stuffing, as the symbol's mode message counts them
        bits = azgen.optimal_sequence_to_bits(azgen.find_optimal_sequence(payload))
        sym["data_bits"] = len(azgen.get_data_codewords(bits, cfg.cw_bits)) * cfg.cw_bits
    except Exception:
        pass
    return sym


def decodes(sym, payload):
    """'ok', 'BAD' or '-' (no zxing-cpp / no modules): zxing-cpp reads the exact bytes back."""
    modules = sym.get("modules")
    if zxingcpp is None or not modules:
        return "-"
    scale, quiet = 4, 4
    width = (len(modules[0]) + 2 * quiet) * scale
    out = bytearray(b"\xff" * width * quiet * scale)
    side = b"\xff" * quiet * scale
    for row in modules:
        out += (side + b"".join((b"\x00" if c == "1" else b"\xff") * scale for c in row) + side) * scale
    out += b"\xff" * width * quiet * scale
    img = Image.frombytes("L", (width, len(out) // width), bytes(out))
    found = zxingcpp.read_barcodes(img, formats=zxingcpp.BarcodeFormat.Aztec)
    return "ok" if len(found) == 1 and found[0].bytes == payload else "BAD"


def describe(sym):
    return f"{sym['rows']}x{sym['cols']} L{sym['layers']} {'compact' if sym['compact'] else 'full'}"


def difference(tm, ind):
    d = tm["rows"] - ind["rows"]
    if d == 0:
        same_shape = tm["layers"] == ind["layers"] and tm["compact"] == ind["compact"]
        return "same" if same_shape else "same size"
    return (f"{d:+d} modules ({(tm['rows'] ** 2) / (ind['rows'] ** 2) - 1:+.0%} area, "
            f"{tm['layers'] - ind['layers']:+d} layers)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--level", type=int, choices=sorted(EC_PERCENT), default=2,
                    help="ECC level for both encoders (default 2 = 23%%)")
    ap.add_argument("--seed", type=int, default=24778, help="seed for the made-up payloads")
    args = ap.parse_args()
    level = args.level

    if not (os.path.isfile(TOKENMINT) and os.access(TOKENMINT, os.X_OK)):
        print(f"tokenmint CLI not found or not executable: {TOKENMINT} (set TOKENMINT)")
        return 1

    ind_name = dist_version("aztec_code_generator", "aztec-py")
    zx_name = dist_version("zxing-cpp") if zxingcpp else "zxing-cpp not installed"
    print(f"# Aztec symbol sizes at ECC level {level} ({EC_PERCENT[level]}% + 3 codewords)")
    print(f"# TokenMint (libzint) vs {ind_name} (pure Python, ec_percent={EC_PERCENT[level]}); "
          f"decode check: {zx_name}")
    rows, notes, tool_failed = [], [], False
    for label, payload, kind in payloads(args.seed):
        try:
            tm = tokenmint_symbol(payload, kind, level)
            tm_cell = describe(tm)
        except ToolFailed as e:
            tm, tm_cell, tool_failed = None, "error", True
            notes.append(f"{label} ({len(payload)} B): {e}")
        try:
            ind = independent_symbol(payload, level)
            ind_cell = describe(ind)
        except Exception as e:  # the encoder raises plain Exception for "too big"
            ind, ind_cell = None, "cannot encode"
            notes.append(f"{label} ({len(payload)} B): {ind_name} cannot encode it: {e}")
        diff = difference(tm, ind) if tm and ind else "-"
        check = f"{decodes(tm, payload) if tm else '-'}/{decodes(ind, payload) if ind else '-'}"
        data_bits = f"{(tm or {}).get('data_bits', '-')}/{(ind or {}).get('data_bits', '-')}"
        rows.append((f"{label}", f"{len(payload)} {'B' if kind == 'binary' else 'ch'}",
                     tm_cell, ind_cell, diff, data_bits, check))

    head = ("payload", "length", "TokenMint", "aztec_code_generator", "TokenMint - independent",
            "data bits TM/ind", "zxing TM/ind")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    print(line(head))
    print(line(tuple("-" * w for w in widths)))
    for r in rows:
        print(line(r))
    print("# sizes are rows x columns in modules, L = layers; 'same size' = same side, other layout;")
    print("# data bits = data codewords x codeword bits (the encoders' text/binary compaction, stuffed)")
    print("# binary payloads go to TokenMint as --hex and to aztec_code_generator as raw bytes "
          "(Binary Shift, no ECI)")
    for n in notes:
        print(f"note: {n}")
    return 1 if tool_failed else 0


if __name__ == "__main__":
    sys.exit(main())
