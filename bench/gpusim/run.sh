#!/usr/bin/env bash
# Run one CUDA program's device code under GPGPU-Sim (the GPU simulator's build.sh builds it
# into DEST), with the workarounds flysim's device code needs:
#   bench/gpusim/run.sh DEST PROGRAM [ARGS...]
# The simulator extracts each PTX file with $CUDA_INSTALL_PATH/bin/cuobjdump -xptx and
# parses it; its parser loses the upper bits of 64-bit integer literals (every float64
# constant nvcc stores through a u64 register, e.g. 1.0 in the kinematics, reads as 0).
# CUDA_INSTALL_PATH points here at a toolkit of two wrappers: cuobjdump extracts, keeps
# the original as NAME.orig and rewrites NAME with bench/gpusim/ptx_fix.py; ptxas (which the
# simulator runs for each kernel's registers) reads NAME.orig, the code nvcc wrote, and its
# report is cached by content (FLYSIM_GPUSIM_CACHE, default ~/.cache/flysim-gpusim). The
# program runs in a scratch folder with the simulator's configuration; stdout and stderr
# pass through; the exit status is the program's.
set -u
dest=$(cd "${1:?usage: run.sh DEST PROGRAM [ARGS...]}" && pwd) || exit 2
shift
prog=$(command -v "$1" || echo "$1")
case $prog in /*) ;; *) prog=$PWD/$prog ;; esac
shift
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
run=$(mktemp -d)
trap 'rm -rf "$run"' EXIT
cp "$dest"/config/* "$run/"
real="$dest/cuda118"
mkdir -p "$run/toolkit/bin"
for tool in "$real"/bin/*; do ln -s "$(readlink -f "$tool")" "$run/toolkit/bin/$(basename "$tool")"; done
rm -f "$run/toolkit/bin/cuobjdump" "$run/toolkit/bin/ptxas"
cat >"$run/toolkit/bin/cuobjdump" <<SH
#!/usr/bin/env bash
"$real/bin/cuobjdump" "\$@" || exit
if [ "\$1" = -xptx ]; then cp "\$2" "\$2.orig" && python3 "$here/ptx_fix.py" "\$2" >&2 || exit; fi
SH
cache="${FLYSIM_GPUSIM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/flysim-gpusim}"
mkdir -p "$cache"
cat >"$run/toolkit/bin/ptxas" <<SH
#!/usr/bin/env bash
# ptxas -v on NAME.orig; its report (all the simulator reads) kept by the input's hash in
# $cache: a 4 MB module takes ptxas 25 s, and every run would compile the same code again
args=()
for a in "\$@"; do if [ -f "\$a.orig" ]; then args+=("\$a.orig"); else args+=("\$a"); fi; done
key=\$( (printf '%s\\n' "\${args[@]##*/}"; for a in "\${args[@]}"; do [ -f "\$a" ] && cat "\$a"; done) | sha256sum | cut -c1-32)
if [ -f "$cache/\$key.txt" ]; then cat "$cache/\$key.txt" >&2; exit 0; fi
tmp="$cache/\$key.\$\$.tmp" # this process's: runs at once may compile the same module
"$real/bin/ptxas" "\${args[@]}" 2>"\$tmp"; rc=\$?
cat "\$tmp" >&2
if [ \$rc = 0 ]; then mv -f "\$tmp" "$cache/\$key.txt"; else rm -f "\$tmp"; fi
exit \$rc
SH
chmod +x "$run/toolkit/bin/cuobjdump" "$run/toolkit/bin/ptxas"
cd "$run" || exit 2
# shellcheck disable=SC1091
set +u # the simulator's setup script reads unset variables (and runs git in its tree)
source "$dest/env.sh" >/dev/null 2>&1
export CUDA_INSTALL_PATH="$run/toolkit"
"$prog" "$@"
