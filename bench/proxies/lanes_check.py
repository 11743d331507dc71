#!/usr/bin/env python3
"""Run the lane-utilisation profile (lanes_profile, bench/proxies/lanes_profile.c, at the
device's lanes per world) and hold it to the record: the whole step's utilisation must stay
above half of bench/results/lanes.csv's at the same width (a stage that lost its lanes, or
a loop serialised on one), and its serial share below the record's plus 25 points. The profile
times lanes with the CPU's cycle counter, so it varies by about 10 % from run to run on
a quiet machine; on a shared one, where other work deschedules the lane threads, one run
in several reads twice the serial share. So a failing run is repeated, up to ATTEMPTS
runs in all, and the check passes if one of them is within the bounds: a lost lane or a
serialised loop is in every run, a neighbour's load is not.

  lanes_check.py LANES_PROFILE_BINARY RECORD_CSV [OUT_CSV]
"""

import csv
import subprocess
import sys

ATTEMPTS = 3


def whole_step(path, lanes=None):
    """The whole step's (lanes, utilisation, serial share): at `lanes`, else the first."""
    for row in csv.DictReader(open(path)):
        if row["part"] == "whole step" and (lanes is None or int(row["lanes"]) == lanes):
            return int(row["lanes"]), float(row["utilisation"]), float(row["serial_share"])
    sys.exit(f"lanes_check: {path} has no 'whole step' row" +
             (f" at {lanes} lanes a world" if lanes else ""))


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    binary, record = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) == 4 else "lanes.csv"
    for attempt in range(1, ATTEMPTS + 1):
        p = subprocess.run([binary, "--csv", out], capture_output=True, text=True)
        print(p.stdout, end="")
        if p.returncode:
            sys.exit(f"lanes_check: {binary} failed: {p.stderr}")
        lanes, util, serial = whole_step(out)
        _, util0, serial0 = whole_step(record, lanes)
        print(f"run {attempt}: whole step at {lanes} lanes a world: utilisation {util:.3f} "
              f"(recorded {util0:.3f}), serial share {100 * serial:.1f} % "
              f"(recorded {100 * serial0:.1f} %)")
        bad = []
        if util < 0.5 * util0:
            bad.append(f"utilisation {util:.3f} < half the recorded {util0:.3f}")
        if serial > serial0 + 0.25:
            bad.append(f"serial share {serial:.3f} > the recorded {serial0:.3f} + 0.25")
        if not bad:
            print("lanes_check: within the record")
            return
        print(f"run {attempt}: " + "; ".join(bad))
    sys.exit(f"lanes_check: outside the record in all {ATTEMPTS} runs (bench/results/lanes.csv; "
             "update it with `flysim bench --lanes --out bench/results` for a reason you can state)")


if __name__ == "__main__":
    main()
