#!/usr/bin/env python3
"""The lifetimes of a world's data fields within one step, read off the stage code.

For every data field of common/engine/fields.h, the first and the last phase of fs_step
(common/engine/stage_forward.h) whose code refers to it (`d->field`), following the calls of
each phase's function through every FS_HD (and FS_HD_OUTLINE) function of common/engine/*.h
and common/model/*.h. common/model/onchip.c's plan lets two fields share on-chip bytes only
where these ranges do not overlap, so its table (kChip: field, first phase, last phase; the
fields of kFluidReads to PASSIVE at least, those of kSensorReads to SENSOR) must cover what
the code does:

  scripts/onchip_lifetimes.py            print the table the code implies
  scripts/onchip_lifetimes.py --check    exit 1 if common/model/onchip.c's table ends a field
                                         earlier, or starts it later, than the code
                                         (the ctest engine_onchip_lifetimes)

The analysis is conservative: a reference anywhere in a function counts for every
phase that calls it, and a reference in fs_fwd_constraint's own body counts for all
of its phases.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "common", "model")
ENGINE = os.path.join(ROOT, "common", "engine")

# fs_step's phases in order are common/model/onchip.h's FS_CHIP_*: the stages of
# common/engine/fields.h's FS_STAGES (X(ID, name, function): the phase of that ID runs that
# function), but the constraint stage, which the plan times by its parts: these, by the
# functions fs_fwd_constraint calls for each (NOSLIP here is its noslip on the islands, not
# the stage that runs noslip alone).
CONSTRAINT_PARTS = {
    "SOLVER_SETUP": ["fsi_solver_rows", "fsi_islands", "fsi_warmstart", "fsi_island"],
    "NEWTON": ["fsi_primal"],
    "NOSLIP": ["fsi_noslip_islands"],
    "SOLVER_RESULTS": ["fsi_solver_results"],
}


def stages():
    """FS_STAGES of common/engine/fields.h: [(ID, function)] in mj_step's order."""
    text = open(os.path.join(ENGINE, "fields.h")).read()
    body = text[text.index("#define FS_STAGES(X)"):]
    body = body[:body.index("\n\n")]
    return re.findall(r"X\(\s*(\w+)\s*,\s*\"\w+\"\s*,\s*(\w+)\s*\)", body)


def phases():
    """[(phase, [functions])] in the order of common/model/onchip.h's FS_CHIP_*."""
    text = open(os.path.join(MODEL, "onchip.h")).read()
    body = text[text.index("FS_CHIP_KINEMATICS = 0"):]
    names = re.findall(r"FS_CHIP_(\w+)", body[:body.index("FS_CHIP_NPHASE")])
    table = stages()
    function = dict(table)
    out = []
    for name in names:
        if name in CONSTRAINT_PARTS:
            out.append((name, CONSTRAINT_PARTS[name]))
        elif name in function:
            out.append((name, [function[name]]))
        else:
            sys.exit(f"onchip_lifetimes: phase FS_CHIP_{name} is neither a stage of FS_STAGES "
                     "nor a part of the constraint stage")
    order = [sid for sid, _ in table]  # the stages' phases: every stage but the split one
    staged = [name for name, _ in out if name in function and name not in CONSTRAINT_PARTS]
    missing = [sid for sid in order if sid not in names and sid != "CONSTRAINT"]
    if missing or staged != sorted(staged, key=order.index):
        sys.exit("onchip_lifetimes: common/model/onchip.h's phases are not FS_STAGES' in order "
                 f"(missing: {', '.join(missing) or 'none'})")
    return out


PHASES = phases()
CONSTRAINT_BODY = "fs_fwd_constraint"  # its own refs: SOLVER_SETUP .. SOLVER_RESULTS


def data_fields():
    text = open(os.path.join(ENGINE, "fields.h")).read()
    body = text[text.index("#define FS_DATA_FIELDS(X)"):]
    body = body[:body.index("\n\n")]
    return re.findall(r"X\(\s*\w+\s*,\s*(\w+)\s*,", body)


def functions():
    """name -> body of every FS_HD function in common/engine/*.h and common/model/*.h."""
    out = {}
    head = re.compile(r"^FS_HD(?:_OUTLINE)?\b[^;{]*?\b(\w+)\s*\(", re.M)
    for path in sorted(os.path.join(d, n) for d in (ENGINE, MODEL) for n in os.listdir(d)):
        if not path.endswith(".h"):
            continue
        text = open(path).read()
        for m in head.finditer(text):
            brace = text.find("{", m.end())
            semi = text.find(";", m.end())
            if brace < 0 or (0 <= semi < brace):
                continue  # a declaration
            depth, i = 0, brace
            while True:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
                if depth == 0:
                    break
            out[m.group(1)] = text[brace:i]
    return out


def refs(funcs, fields):
    """name -> fields its code refers to, calls followed."""
    fieldset = set(fields)
    direct = {f: {x for x in re.findall(r"\bd->(\w+)", b) if x in fieldset}
              for f, b in funcs.items()}
    calls = {f: {x for x in re.findall(r"\b(\w+)\s*\(", b) if x in funcs and x != f}
             for f, b in funcs.items()}
    memo = {}

    def closure(f, seen):
        if f in memo:
            return memo[f]
        seen = seen | {f}
        acc = set(direct[f])
        for g in calls[f]:
            if g not in seen:
                acc |= closure(g, seen)
        memo[f] = acc
        return acc

    return {f: closure(f, frozenset()) for f in funcs}


def lifetimes():
    fields = data_fields()
    funcs = functions()
    r = refs(funcs, fields)
    span = {}
    for k, (_, fns) in enumerate(PHASES):
        for fn in fns:
            if fn not in funcs:
                sys.exit(f"onchip_lifetimes: no function {fn} in common/engine/*.h or common/model/*.h")
            for x in r[fn]:
                lo, hi = span.get(x, (k, k))
                span[x] = (min(lo, k), max(hi, k))
    setup = [p for p, _ in PHASES].index("SOLVER_SETUP")
    results = [p for p, _ in PHASES].index("SOLVER_RESULTS")
    own = {x for x in re.findall(r"\bd->(\w+)", funcs[CONSTRAINT_BODY]) if x in set(fields)}
    for x in own:
        lo, hi = span.get(x, (setup, results))
        span[x] = (min(lo, setup), max(hi, results))
    return span


def table_in_onchip_c():
    text = open(os.path.join(MODEL, "onchip.c")).read()
    rows = re.findall(r"\{FS_FIELD_(\w+),\s*FS_CHIP_(\w+),\s*FS_CHIP_(\w+)\}", text)
    table = {f: (a, b) for f, a, b in rows}
    # kFluidReads: these live to PASSIVE in a model with fluid forces
    fluid = re.search(r"kFluidReads\[\]\s*=\s*\{([^}]*)\}", text)
    names = [p for p, _ in PHASES]
    for f in re.findall(r"FS_FIELD_(\w+)", fluid.group(1) if fluid else ""):
        a, b = table.get(f, ("PASSIVE", "PASSIVE"))
        if b in names and names.index(b) < names.index("PASSIVE"):
            table[f] = (a, "PASSIVE")
    # kSensorReads: these live to SENSOR in a model whose sensors the step computes
    sensor = re.search(r"kSensorReads\[\]\s*=\s*\{([^}]*)\}", text)
    for f in re.findall(r"FS_FIELD_(\w+)", sensor.group(1) if sensor else ""):
        a, b = table.get(f, ("SENSOR", "SENSOR"))
        if b in names and names.index(b) < names.index("SENSOR"):
            table[f] = (a, "SENSOR")
    return table


def main():
    span = lifetimes()
    names = [p for p, _ in PHASES]
    if "--check" not in sys.argv:
        for f, (lo, hi) in sorted(span.items(), key=lambda kv: kv[1]):
            print(f"{f:28s} {names[lo]:22s} {names[hi]}")
        return 0
    table = table_in_onchip_c()
    if not table:
        print("onchip_lifetimes: no kChip table in common/model/onchip.c")
        return 1
    bad = 0
    for f, (a, b) in sorted(table.items()):
        if f not in span:
            print(f"{f}: common/model/onchip.c lists it, and no phase refers to it")
            bad += 1
            continue
        lo, hi = span[f]
        if a not in names or b not in names:
            print(f"{f}: unknown phase {a} or {b}")
            bad += 1
        elif names.index(a) > lo or names.index(b) < hi:
            print(f"{f}: common/model/onchip.c says {a}..{b}, the code refers to it in {names[lo]}.."
                  f"{names[hi]}; fix: widen its row in kChip")
            bad += 1
    print(f"onchip_lifetimes: {len(table)} fields checked, {bad} wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
