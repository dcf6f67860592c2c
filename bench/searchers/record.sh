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
# records only the spaces it names (all but the .pocl ones when ONLY is not set).
# The kernels of record/spaces.lua (record/FAMILY.lua) come first: NAME through CUDA;
# NAME.opencl, a kernel written for this through OpenCL (NVIDIA's, where OCL_ICD_VENDORS
# says); NAME.pocl, the same at its small size (--small) on the CPU through PoCL (device
# `cpu`), named after the CPU (NAME_CPU.pocl), for a machine with PoCL, GPU or not.
# Then conv2d.lua's, and BAT's T1 files through `ktlua run` (exhaustive, or a seeded
# random sample where the space is too large to record whole: NAME.sampleN).
set -u
out=$1
limit=${2:-330}
here=$(cd "$(dirname "$0")" && pwd)
kt="$here/ktlua"
start=$(date +%s)
bat="$here/bat/benchmarks"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | sed 's/NVIDIA //; s/[^A-Za-z0-9]/_/g')
[ -n "$gpu" ] || gpu=unknown
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1 | sed 's/[^A-Za-z0-9]/_/g; s/__*/_/g; s/_$//')
[ -n "$cpu" ] || cpu=unknown

# record NAME DIR COMMAND...: runs COMMAND in DIR with what is left of the time.
record() {
  case " ${ONLY:-$1} " in *" $1 "*) ;; *) return ;; esac
  [ -n "${ONLY:-}" ] || case $1 in *.pocl) return ;; esac
  base=${1%%.*} device=$gpu
  case $1 in *.pocl) device=$cpu ;; esac
  name=${base}_$device${1#"$base"} dir=$2 # conv2d.filter7 -> conv2d_GPU.filter7 ($OUT takes no ~)
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
# t1s FILE N: a sample of N configurations drawn at random (seed 1: the same N configurations each time)
t1s() { echo "$kt" run "$1" --search=random --count="$2" --seed=1 --repeats=3 --format=kernel-tuner-cache --output=; }
# sp KERNEL [DEVICE [WORKERS [FLAG]]]: record/spaces.lua's KERNEL
sp() { echo "$kt" "$here/record/spaces.lua" --kernel="$1" --bat="$bat" ${2:+--device=$2} ${3:+--workers=$3} ${4:-}; }
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
record reduction "$here" $(sp reduction)
record coulomb.2d "$here" $(sp coulomb2d)
record coulomb.3d "$here" $(sp coulomb3d)
record histogram "$here" $(sp histogram)
record matvec "$here" $(sp matvec)
record particles "$here" $(sp particles)
record hotspot "$here" $(sp hotspot)
record expdist "$here" $(sp expdist)
record md5hash "$here" $(sp md5hash)
record builtin_vectors "$here" $(sp builtin_vectors)
record fft "$here" $(sp fft)
record reduction.opencl "$here" $(sp reduction opencl 15)
record coulomb.2d.opencl "$here" $(sp coulomb2d opencl 15)
record coulomb.3d.opencl "$here" $(sp coulomb3d opencl 15)
record histogram.opencl "$here" $(sp histogram opencl 15)
record matvec.opencl "$here" $(sp matvec opencl 15)
record particles.opencl "$here" $(sp particles opencl 15)
for k in mm stencil transpose reduction coulomb.2d coulomb.3d histogram matvec particles; do
  record "$k.pocl" "$here" $(sp "$(echo "$k" | tr -d .)" cpu "$(nproc)" --small)
done
record conv2d "$here" "$kt" "$here/record/conv2d.lua"
record conv2d.filter7 "$here" "$kt" "$here/record/conv2d.lua" --fw=7
record conv2d.n1024 "$here" "$kt" "$here/record/conv2d.lua" --n=1024
record nbody_bat "$bat/nbody" sh -c "$(t1 nbody-CAFF.json)\"\$0\""
record convolution_bat "$bat/convolution" sh -c "$(t1 convolution-CAFF.json)\"\$0\""
record convolution_bat.sample600 "$bat/convolution" sh -c "$(t1s convolution-CAFF.json 600)\"\$0\""
record triad_bat "$bat/TRIAD" sh -c "$(t1 TRIAD-CAFF.json)\"\$0\""
record gemm_bat "$bat/GEMM" sh -c "$(t1 GEMM-CAFF.json)\"\$0\""
cat "$out/record.log"
