#!/usr/bin/env python3
"""fs_step's list of stage calls against the one table of stages (test_stage_list.py SOURCE_DIR).

common/engine/fields.h's FS_STAGES(X) (X(ID, name, function), in mj_step's order) gives fsStage,
fs_stage_name and fs_stage_run's dispatch; common/engine/stage_forward.h writes the step out
as a list of stage calls (fs_step -> fs_forward -> fs_fwd_position, fs_fwd_velocity), the
readable documentation of the pipeline. This reads that list from the code (comments
stripped) and fails, with the call, unless:

  - the step calls the table's functions in the table's order, each once, every stage but
    those NOT_IN_STEP;
  - each call is right after FSI_MARK(FS_STAGE_<its ID>) (the lanes profile's label), but
    for the stages UNMARKED, and each such mark is right before its stage's call.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIELDS = os.path.join(root, "common", "engine", "fields.h")
FORWARD = os.path.join(root, "common", "engine", "stage_forward.h")

# Stages of the table the step does not call itself: noslip alone (the tests' entry;
# fs_fwd_constraint runs noslip within).
NOT_IN_STEP = {"NOSLIP"}
# Stages the step calls without their mark: the constraint stage marks its parts
# (FS_MARK_SOLVER_SETUP, FS_MARK_NEWTON, ...).
UNMARKED = {"CONSTRAINT"}
# The step's functions that hold the list, from the top.
STEP, PARTS = "fs_step", ("fs_forward", "fs_fwd_position", "fs_fwd_velocity")


def code(path):
    """The file without its comments."""
    text = open(path).read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def table():
    """[(ID, name, function)] of FS_STAGES, in order."""
    text = code(FIELDS)
    start = text.find("#define FS_STAGES(X)")
    if start < 0:
        sys.exit(f"test_stage_list: no FS_STAGES(X) in {FIELDS}")
    end = start
    while True:  # the macro's lines: each but the last ends with a backslash
        nl = text.find("\n", end)
        if nl < 0 or text[:nl].rstrip()[-1:] != "\\":
            break
        end = nl + 1
    rows = re.findall(r"X\(\s*(\w+)\s*,\s*\"(\w+)\"\s*,\s*(\w+)\s*\)", text[start:nl])
    if not rows:
        sys.exit("test_stage_list: FS_STAGES(X) has no rows X(ID, \"name\", function)")
    return rows


def body(text, name):
    """The body of FS_HD function `name` (its braces)."""
    m = re.search(r"^FS_HD\b[^;{]*?\b" + name + r"\s*\([^;{]*\{", text, re.M)
    if not m:
        sys.exit(f"test_stage_list: no function {name} in {FORWARD}")
    depth, i = 0, m.end() - 1
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return text[m.end() - 1:i]


def events(text, name, functions):
    """What function `name` does, in order, its parts followed: ("mark", label) and
    ("call", function) for the table's functions."""
    out = []
    for m in re.finditer(r"\bFSI_MARK\s*\(\s*(\w+)\s*\)|\b(\w+)\s*\(", body(text, name)):
        if m.group(1):
            out.append(("mark", m.group(1)))
        elif m.group(2) in PARTS:
            out += events(text, m.group(2), functions)
        elif m.group(2) in functions:
            out.append(("call", m.group(2)))
    return out


def main():
    rows = table()
    of_fn = {fn: sid for sid, _, fn in rows}
    ev = events(code(FORWARD), STEP, of_fn)
    bad = []
    calls = [fn for kind, fn in ev if kind == "call"]
    want = [fn for sid, _, fn in rows if sid not in NOT_IN_STEP]
    if calls != want:
        bad.append("fs_step calls\n    %s\n  the table (FS_STAGES, less %s) says\n    %s"
                   % (", ".join(calls), ", ".join(sorted(NOT_IN_STEP)), ", ".join(want)))
    fn_of = {sid: fn for sid, _, fn in rows}
    for k, (kind, what) in enumerate(ev):
        prev = ev[k - 1] if k else (None, None)
        nxt = ev[k + 1] if k + 1 < len(ev) else (None, None)
        if kind == "call" and of_fn[what] not in UNMARKED:
            mark = "FS_STAGE_" + of_fn[what]
            if prev != ("mark", mark):
                bad.append(f"{what} ({mark}) is not right after FSI_MARK({mark})")
        if kind == "mark" and what.startswith("FS_STAGE_"):
            fn = fn_of.get(what[len("FS_STAGE_"):])
            if fn is None or nxt != ("call", fn):
                bad.append(f"FSI_MARK({what}) is not right before {fn or 'a stage of FS_STAGES'}")
    for b in bad:
        print("test_stage_list: " + b)
    print("test_stage_list: %s (%d stages, %d in the step)"
          % ("passed" if not bad else "FAILED", len(rows), len(calls)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
