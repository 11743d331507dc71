#!/usr/bin/env python3
"""Rewrite a PTX file so that GPGPU-Sim's parser reads it as ptxas does.

    ptx_fix.py FILE        (in place; exit 1 with a message where it cannot)

GPGPU-Sim (667834cf with the CUDA 13 patch) lexes every integer literal into a C
int (atoi, sscanf %x) and widens it by sign extension, so an integer operand of a
64-bit instruction outside [-2^31, 2^31) loses its upper bits: nvcc's
`mov.u64 %rd1, 4607182418800017408` (the bits of 1.0, stored by st.u64) loads 0, and
every float64 constant written that way is lost. Its lexer reads a 0d literal (16 hex
digits) bit for bit into a 64-bit union, which a b64/u64/s64 operand then reads as
those bits: the literal is rewritten as 0d of the same 64 bits. (A 32-bit operand in
[2^31, 2^32) keeps its low 32 bits, which are right: left alone.)

It also drops the DWARF sections `-lineinfo` appends (`.section .debug_str {...}`),
which the parser cannot read (a syntax error after the last function; nothing it
uses is in them).

Address offsets outside a C int cannot be rewritten this way: the script stops.

`trap` is rewritten as `exit`: the simulator asks every instruction but a few untyped
ones (exit, ret, bra, nop, call...) for its type, and `trap` has none (an assertion in
ptx_instruction::get_type aborts the program while it loads the PTX). Our kernels trap
only where a model reaches a kernel built without what it needs (the step kernel's
variants without the convex collider, handed a model with convex pairs), which the backend
never launches: under the simulator such a thread would exit instead of failing.
"""
import re
import sys

INT_LITERAL = re.compile(r"(?<![\w.$%])(-?(?:0[xX][0-9a-fA-F]+|[0-9]+))(U?)(?![\w.])")
WIDE = re.compile(r"\.[bsu]64\b")


def literal_value(text):
    neg = text.startswith("-")
    body = text[1:] if neg else text
    v = int(body, 16) if body[:2].lower() == "0x" else int(body, 10)
    return -v if neg else v


def fix_line(line, lineno, path):
    code = line.split("//", 1)[0]
    stripped = code.strip()
    if not stripped or stripped.startswith(".") or stripped.endswith(":"):
        return line, 0
    opcode = stripped.split()[0] if not stripped.startswith("@") else stripped.split()[1]
    wide = bool(WIDE.search(opcode))
    # address offsets: [%rd1+N]
    for m in re.finditer(r"\[[^\]]*?([+-]\s*[0-9]+)\s*\]", code):
        off = int(m.group(1).replace(" ", ""))
        if not -2**31 <= off < 2**31:
            sys.exit(f"ptx_fix: {path}:{lineno}: address offset {off} does not fit GPGPU-Sim's "
                     "C int; no rewrite keeps it")
    out, n, last = [], 0, 0
    for m in INT_LITERAL.finditer(code):
        start = m.start()
        # not inside [...] (offsets) and not a register/label name
        if code.count("[", 0, start) > code.count("]", 0, start):
            continue
        v = literal_value(m.group(1))
        if -2**31 <= v < 2**31 or (not wide and v < 2**32):
            continue
        if not wide:
            sys.exit(f"ptx_fix: {path}:{lineno}: literal {m.group(1)} does not fit a 32-bit operand")
        bits = v & (2**64 - 1)
        out.append(code[last:start])
        out.append(f"0d{bits:016X}")
        last = m.end()
        n += 1
    if not n:
        return line, 0
    out.append(line[last:])
    return "".join(out), n


TRAP = re.compile(r"(?<![\w.])trap;")


def main():
    path = sys.argv[1]
    with open(path) as f:
        lines = f.read().split("\n")
    out, nfix, ntraps, skip, depth = [], 0, 0, False, 0
    for i, line in enumerate(lines, 1):
        if not skip and re.match(r"\s*\.section\s+\.debug_", line):
            skip, depth = True, 0
        if skip:
            depth += line.count("{") - line.count("}")
            if "}" in line and depth <= 0:
                skip = False
            continue
        line, n = fix_line(line, i, path)
        nfix += n
        line, ntrap = TRAP.subn("exit; // trap (GPGPU-Sim: no type)", line)
        ntraps += ntrap
        out.append(line)
    with open(path, "w") as f:
        f.write("\n".join(out))
    print(f"ptx_fix: {path}: {nfix} 64-bit integer literals rewritten as 0d bits, {ntraps} "
          "trap as exit")


if __name__ == "__main__":
    main()
