#!/usr/bin/env bash
# Instructions per world-step (callgrind: the same count whatever else the machine does) of
# MuJoCo's mj_step (cpu) and flysim's host stepper (float64, float32) on models no one here
# wrote: dm_control's suite as the conformance test steps them (tests/test_conformance.py),
# sine targets, 1 world, 1 thread; S and 2S steps, the difference is S steps with set-up and
# warm-up cancelled. The GPU-free proxy of "host per core at least MuJoCo's" where the
# machine is shared and a timing is not worth having.
#   bench/proxies/instructions_models.sh [S] [VARIANT]
#     S        steps (default 100)
#     VARIANT  "no-contacts" (default: --disable contact: limits, friction loss and the
#              solver) or "smooth" (--disable constraint)
# Prints a table and writes bench/results/instructions-models-VARIANT.csv; models the
# engine refuses are listed as refused.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
flysim="${FLYSIM_BUILD_DIR:-$root/build}/flysim"
python="${FLYSIM_PYTHON:-$root/.venv/bin/python}"
s=${1:-100}
variant=${2:-no-contacts}
case "$variant" in
no-contacts) disable=contact ;;
smooth) disable=constraint ;;
*)
  echo "instructions_models: VARIANT '$variant' is not no-contacts or smooth" >&2
  exit 2
  ;;
esac
suite=$("$python" -c 'import dm_control, os; print(os.path.join(os.path.dirname(dm_control.__file__), "suite"))')
csv="$root/bench/results/instructions-models-$variant.csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() { # model backend precision steps -> instructions of the whole process, or "refused"
  local prec=()
  [ "$2" = host ] && prec=(--precision "$3")
  if ! valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$flysim" replay \
    --model "$1" --targets sine --disable "$disable" --backend "$2" "${prec[@]}" --worlds 1 \
    --threads 1 --sim-steps "$4" --warmup-sec 0 --quiet >/dev/null 2>"$tmp/err"; then
    grep -q "does not implement" "$tmp/err" && { echo refused; return; }
    cat "$tmp/err" >&2
    exit 1
  fi
  sed -n 's/^summary: *//p; s/^totals: *//p' "$tmp/cg.out" | head -n 1
}
echo "model,stepper,precision,steps,instructions_per_world_step" >"$csv"
printf '%-14s %14s %14s %14s %9s %9s\n' model "cpu f64" "host f64" "host f32" "f64/cpu" "f32/cpu"
for xml in "$suite"/*.xml; do
  name=$(basename "$xml" .xml)
  declare -A per=()
  for v in "cpu f64" "host f64" "host f32"; do
    set -- $v
    a=$(count "$xml" "$1" "$2" "$s")
    if [ "$a" = refused ]; then
      per["$1 $2"]=refused
      continue
    fi
    b=$(count "$xml" "$1" "$2" $((2 * s)))
    per["$1 $2"]=$(((b - a) / s))
    echo "$name,$1,$2,$s,${per["$1 $2"]}" >>"$csv"
  done
  if [ "${per["host f64"]}" = refused ]; then
    printf '%-14s %14s %14s\n' "$name" "${per["cpu f64"]}" "refused"
  else
    printf '%-14s %14d %14d %14d %9.2f %9.2f\n' "$name" "${per["cpu f64"]}" "${per["host f64"]}" \
      "${per["host f32"]}" "$(echo "${per["host f64"]} / ${per["cpu f64"]}" | bc -l)" \
      "$(echo "${per["host f32"]} / ${per["cpu f64"]}" | bc -l)"
  fi
  unset per
done
