#!/usr/bin/env python3
"""Run the on-chip proxy (onchip_sizes_f32 and _f64: bench/proxies/onchip_sizes.c) and hold
it to the record, bench/results/onchip-sizes.csv: at every precision and contact bound, the
bytes that keep a world's whole intermediate state on-chip (shared_bytes) must not grow,
and the default plans (848 B and 2,640 B a world) must not hold fewer fields. A change that
improves them is recorded with --write.

  onchip_check.py ONCHIP_SIZES_F32 ONCHIP_SIZES_F64 RECORD_CSV [--write]
"""

import csv
import io
import subprocess
import sys


def rows(binaries):
    text = ""
    for k, b in enumerate(binaries):
        p = subprocess.run([b] + (["--header"] if k == 0 else []), capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"onchip_check: {b} failed: {p.stderr}")
        text += p.stdout
    return text, {(r["precision"], r["max_contacts"]): r for r in csv.DictReader(io.StringIO(text))}


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if len(args) != 3:
        sys.exit(__doc__)
    text, now = rows(args[:2])
    print(text, end="")
    if "--write" in sys.argv:
        open(args[2], "w").write(text)
        print(f"onchip_check: wrote {args[2]}")
        return 0
    bad = []
    for r in csv.DictReader(open(args[2])):
        key = (r["precision"], r["max_contacts"])
        if key not in now:
            bad.append(f"{key}: no such row now")
            continue
        n = now[key]
        if int(n["shared_bytes"]) > int(r["shared_bytes"]):
            bad.append(f"{key}: every intermediate on-chip takes {n['shared_bytes']} B, the record "
                       f"{r['shared_bytes']}")
        for plan in ("plan848", "plan2640"):
            if int(n[f"{plan}_fields"]) < int(r[f"{plan}_fields"]):
                bad.append(f"{key}: the {plan[4:]} B plan holds {n[plan + '_fields']} fields, the "
                           f"record {r[plan + '_fields']}")
    for b in bad:
        print("onchip_check: " + b)
    print(f"onchip_check: {len(now)} rows against {args[2]}: " + ("FAILED" if bad else "held"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
