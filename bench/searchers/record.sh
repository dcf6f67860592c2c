#!/bin/sh
# bench/searchers/record.sh: records complete spaces (every configuration,
# failed ones included) as Kernel Tuner cache files, for the searcher
# benchmarks (bench/searchers/spaces/README.md). Runs on the GPU machine from
# a bundle: `make bundle`, then cp -r bench/searchers/record build/bundle/record,
# cp bench/searchers/record.sh build/bundle/, cp -r ../shared/bat build/bundle/bat.
#   ./record.sh OUTDIR [SECONDS]
# Each space is recorded in turn while SECONDS (default 330) last; one that
# would not finish in time is cut off and left out. OUTDIR gets NAME_GPU.json.gz
# and record.log (what each took, and the end of its output). ONLY="conv2d conv2d.filter7"
# records only the spaces it names. mm, dedisp, nbody, triad, pnpoly, stencil and transpose
# (record/spaces.lua) come first; mm.opencl (stencil.opencl, transpose.opencl) is mm through
# OpenCL (NVIDIA's, where OCL_ICD_VENDORS says).
set -u
out=$1
limit=${2:-330}
here=$(cd "$(dirname "$0")" && pwd)
kt="$here/ktlua"
start=$(date +%s)
bat="$here/bat/benchmarks"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/[^A-Za-z0-9]/_/g')
[ -n "$gpu" ] || gpu=unknown

# record NAME DIR COMMAND...: runs COMMAND in DIR with what is left of the time.
record() {
  case " ${ONLY:-$1} " in *" $1 "*) ;; *) return ;; esac
  base=${1%%.*}
  name=${base}_$gpu${1#"$base"} dir=$2 # conv2d.filter7 -> conv2d_GPU.filter7 ($OUT takes no ~)
  shift 2
  left=$((limit - ($(date +%s) - start)))
  if [ "$left" -lt 20 ]; then echo "$name: skipped, $left s left" >>"$out/record.log"; return; fi
  t0=$(date +%s)
  (cd "$dir" && timeout "$left" "$@" "$out/$name.json") >"$out/$name.log" 2>&1
  rc=$?
  { echo "$name: exit $rc after $(($(date +%s) - t0)) s"; tail -n 4 "$out/$name.log"; } >>"$out/record.log"
  rm -f "$out/$name.log"
  [ -f "$out/$name.json" ] && gzip -9 "$out/$name.json"
}

t1() { echo "$kt" run "$1" --search=exhaustive --fraction=1 --repeats=3 --format=kernel-tuner-cache --output=; }
sp() { echo "$kt" "$here/record/spaces.lua" --kernel="$1" --bat="$bat" ${2:+--device=$2} ${3:+--workers=$3}; }
record mm "$here" $(sp mm)
record dedisp "$here" $(sp dedisp)
record mm.opencl "$here" $(sp mm opencl 15)
record nbody "$here" $(sp nbody)
record triad "$here" $(sp triad)
record pnpoly "$here" $(sp pnpoly)
record stencil "$here" $(sp stencil)
record transpose "$here" $(sp transpose)
record stencil.opencl "$here" $(sp stencil opencl 15)
record transpose.opencl "$here" $(sp transpose opencl 15)
record conv2d "$here" "$kt" "$here/record/conv2d.lua"
record conv2d.filter7 "$here" "$kt" "$here/record/conv2d.lua" --fw=7
record conv2d.n1024 "$here" "$kt" "$here/record/conv2d.lua" --n=1024
record nbody_bat "$bat/nbody" sh -c "$(t1 nbody-CAFF.json)\"\$0\""
record convolution_bat "$bat/convolution" sh -c "$(t1 convolution-CAFF.json)\"\$0\""
record triad_bat "$bat/TRIAD" sh -c "$(t1 TRIAD-CAFF.json)\"\$0\""
cat "$out/record.log"
