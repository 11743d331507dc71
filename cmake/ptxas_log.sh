#!/usr/bin/env bash
# CUDA compiler launcher (CMAKE_CUDA_COMPILER_LAUNCHER): runs the compile with
# ptxas's resource report on (-Xptxas=-v) and keeps that report next to the object
# (<object>.ptxas.txt) instead of in the build log; everything else the compiler says
# goes to stderr as usual. bench/proxies/ptxas_report.sh and the cuda_ptxas test read the
# reports: every kernel's registers, stack, spills and shared memory per arch, from
# the build itself, at no extra compile.
obj=""
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && obj=$a
  prev=$a
done
tmp=$(mktemp)
"$@" -Xptxas=-v 2>"$tmp"
rc=$?
if [ -n "$obj" ]; then
  grep -E '^ptxas info|bytes stack frame' "$tmp" >"$obj.ptxas.txt" || true
fi
grep -vE '^ptxas info|bytes stack frame' "$tmp" >&2 || true
rm -f "$tmp"
exit $rc
