#!/bin/sh
# gpu-check.sh: the GPU run of ktlua, from inside the folder that `make
# bundle` builds, on an NVIDIA machine with the driver and CUDA but no Lua:
# lists the devices, runs every example and the backend specs (with the
# GEN macros' spec, spec/oclopts_gen_spec.lua) on cuda:0 and on the NVIDIA
# OpenCL device, and writes a summary for bench/RESULTS.md.
#
#   ./gpu-check.sh [out-dir]          (default: ./gpu-check-out)
#
# out-dir receives summary.md (the summary, also printed at the end) and
# gpu-check.log (every command's full output). GPU_CHECK_DEVICES="id ..."
# chooses other devices (e.g. opencl:0:0 to try the script on a CPU);
# GPU_CHECK_TIMEOUT (seconds, default 120) bounds each example and spec run,
# so that the whole check stays within a 10-minute command.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/gpu-check-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$here" || exit 1
log="$out/gpu-check.log"
limit=${GPU_CHECK_TIMEOUT:-120}
summary="$out/summary.md"
: >"$log"

# The driver's libraries may sit in NVIDIA's container mount.
if [ -d /usr/local/nvidia/lib64 ]; then
  LD_LIBRARY_PATH="/usr/local/nvidia/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi

# NVIDIA's OpenCL driver through an ICD file of our own, beside the
# system's other ICD files: the machine has the driver library but may
# lack /etc/OpenCL/vendors/nvidia.icd.
nvidia_opencl() {
  for f in $(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl\.so\.1 / { print $NF }') \
           /usr/local/nvidia/lib64/libnvidia-opencl.so.1 /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1; do
    [ -e "$f" ] && { echo "$f"; return; }
  done
  echo libnvidia-opencl.so.1
}
icd_dir=$(mktemp -d)
trap 'rm -rf "$icd_dir"' EXIT
for f in /etc/OpenCL/vendors/*.icd; do
  [ -e "$f" ] && ! grep -q libnvidia-opencl "$f" && cp "$f" "$icd_dir/"
done
nvidia_opencl >"$icd_dir/nvidia.icd"
OCL_ICD_VENDORS="$icd_dir"
export OCL_ICD_VENDORS

# $1: title; the rest: the command. Appends its output to the log; returns its status.
logged() {
  title=$1
  shift
  printf '\n===== %s\n$ %s\n' "$title" "$*" >>"$log"
  "$@" >"$out/.last" 2>&1
  status=$?
  cat "$out/.last" >>"$log"
  printf '===== exit status %d\n' "$status" >>"$log"
  return "$status"
}

logged "devices" ./ktlua --devices
devices_text=$(cat "$out/.last")
list_code='for _, d in ipairs(kt.devices()) do print(d.id, d.name, d.vendor) end'
logged "device list" ./ktlua -e "$list_code"
device_list=$(cat "$out/.last")
if [ -n "${GPU_CHECK_DEVICES:-}" ]; then
  devices=$GPU_CHECK_DEVICES
else
  opencl=$(printf '%s\n' "$device_list" | awk -F'\t' '$1 ~ /^opencl:/ && $3 ~ /NVIDIA/ { print $1; exit }')
  devices="cuda:0${opencl:+ $opencl}"
fi

{
  echo "## GPU check, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  command -v nvidia-smi >/dev/null && echo "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader 2>/dev/null | head -1)"
  echo "OpenCL ICD: $(cat "$icd_dir/nvidia.icd")"
  echo
  echo "Devices found (\`ktlua --devices\`):"
  echo
  echo '```'
  printf '%s\n' "$devices_text" | grep -E '^[a-z]+:[0-9]|compute capability|multiprocessors|compute units|global memory|L2 cache|not available|no devices'
  echo '```'
  echo
  echo "| example | device | configurations | best configuration | best time (ms) | wall (s) |"
  echo "| --- | --- | --- | --- | --- | --- |"
} >"$summary"

# One example on one device: its best configuration and time.
run_example() {
  ex=$1
  dev=$2
  start=$(date +%s)
  KTLUA_DEVICE=$dev
  export KTLUA_DEVICE
  logged "$ex on $dev" timeout "$limit" ./ktlua "$ex"
  status=$?
  wall=$(($(date +%s) - start))
  counts=$(grep -E '^  [0-9]+ [a-z_]+' "$out/.last" | head -1 | sed 's/^ *//')
  best=$(grep '^best: ' "$out/.last" | tail -1 | sed 's/^best: //')
  config=$(printf '%s' "$best" | sed 's/  *[0-9.]* ms$//')
  ms=$(printf '%s' "$best" | sed -n 's/.*  \([0-9.]*\) ms$/\1/p')
  [ "$status" -ne 0 ] && config="FAILED (exit $status, see gpu-check.log)"
  echo "| $(basename "$ex") | $dev | ${counts:--} | ${config:--} | ${ms:--} | $wall |" >>"$summary"
}

for dev in $devices; do
  for ex in examples/*.lua; do run_example "$ex" "$dev"; done
done

{
  echo
  echo "| specs | device | result |"
  echo "| --- | --- | --- |"
} >>"$summary"
# Each spec file in a process of its own: a GPU in exclusive-process mode
# takes one device process at a time, and a file's tuners live until it ends.
for dev in $devices; do
  # oclopts_gen_spec: GENINIT/GENLIMIT/GENSTEP share every loop exactly once on the device
  specs="spec/backend_spec.lua spec/oclopts_gen_spec.lua"
  case $dev in cuda:*) specs="$specs spec/cuda_spec.lua" ;; esac
  KTLUA_DEVICE=$dev
  export KTLUA_DEVICE
  for spec in $specs; do
    logged "$spec on $dev" timeout "$limit" ./ktlua bin/busted -o spec/support/output.lua "$spec"
    result=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/.last" | tail -1)
    pending=$(grep -c '^Pending' "$out/.last")
    echo "| ${spec#spec/} | $dev | ${result:-did not finish} ($pending pending) |" >>"$summary"
  done
done

# The trust reproduction (issue 12): overflowing configurations among
# correct ones, every correct one recorded ok.
if [ -f bench/trust/matmul_oob.lua ]; then
  printf '\nTrust (`bench/trust/matmul_oob.lua`):\n\n```\n' >>"$summary"
  for dev in $devices; do
    logged "trust on $dev" timeout "$limit" ./ktlua bench/trust/matmul_oob.lua "--device=$dev"
    tail -n 8 "$out/.last" >>"$summary"
  done
  echo '```' >>"$summary"
fi

# The device probes and the cost model's error on the examples (issue 15),
# when the bundle has them and GPU_CHECK_PROBE is not 0.
if [ -f bench/probe/model.lua ] && [ "${GPU_CHECK_PROBE:-1}" != 0 ]; then
  printf '\nDevice probes and the cost model (`bench/probe/model.lua`):\n\n' >>"$summary"
  for dev in $devices; do
    logged "probe on $dev" timeout "${GPU_CHECK_PROBE_TIMEOUT:-300}" ./ktlua bench/probe/model.lua "--device=$dev"
    cat "$out/.last" >>"$summary"
  done
fi

# The overhead benchmark (issue 6), when the bundle has it and
# GPU_CHECK_BENCH is not 0: a vector addition and a tiled GEMM per device.
if [ -f bench/overhead/overhead.lua ] && [ "${GPU_CHECK_BENCH:-1}" != 0 ]; then
  {
    echo
    echo "Overhead benchmark (\`bench/overhead/overhead.lua\`):"
    echo
    echo '```'
  } >>"$summary"
  for dev in $devices; do
    # The GEMM's 1,290 compiles take long with an OpenCL driver: CUDA runs both.
    case $dev in cuda:*) which= ;; *) which=--only=vadd ;; esac
    logged "overhead on $dev" timeout "${GPU_CHECK_BENCH_TIMEOUT:-300}" ./ktlua bench/overhead/overhead.lua "--device=$dev" $which
    cat "$out/.last" >>"$summary"
  done
  # The same in the tuner's own process, for the cost of isolation.
  case " $devices " in *" cuda:0 "*)
    logged "overhead on cuda:0 in-process" timeout "${GPU_CHECK_BENCH_TIMEOUT:-300}" ./ktlua bench/overhead/overhead.lua --device=cuda:0 --inprocess
    cat "$out/.last" >>"$summary" ;;
  esac
  echo '```' >>"$summary"
fi

# The pipeline benchmark (issue 18): a 2048^3 GEMM, 200 random configurations,
# 7 timed runs each, validated: one by one, then pipelined (outputs compared
# on the device), then pipelined with a host comparison.
if [ -f bench/pipeline/gemm.lua ] && [ "${GPU_CHECK_BENCH:-1}" != 0 ]; then
  case " $devices " in *" cuda:0 "*)
    {
      echo
      echo "Pipeline benchmark (\`bench/pipeline/gemm.lua\`):"
      echo
      echo '```'
    } >>"$summary"
    logged "pipeline on cuda:0" timeout "${GPU_CHECK_BENCH_TIMEOUT:-300}" ./ktlua bench/pipeline/gemm.lua --device=cuda:0 --both
    cat "$out/.last" >>"$summary"
    logged "pipeline on cuda:0, host comparison" timeout "${GPU_CHECK_BENCH_TIMEOUT:-300}" ./ktlua bench/pipeline/gemm.lua --device=cuda:0 --validate_on=host
    cat "$out/.last" >>"$summary"
    echo '```' >>"$summary" ;;
  esac
fi
rm -f "$out/.last"

cat "$summary"
