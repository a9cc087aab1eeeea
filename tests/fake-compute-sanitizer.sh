#!/usr/bin/env bash
# fake-compute-sanitizer: a stand-in for compute-sanitizer on machines without a GPU. It
# takes the real tool's flags (--tool T --log-file F [--report-api-errors X]), runs the
# command after them (the harness), and writes the summary lines the real tool would write
# to F. Markers in the kernel source beside the request decide the findings:
#   FAKE_RACE  racecheck reports 3 errors and 4 warnings
#   FAKE_OOB   memcheck reports an invalid global read (1160 errors)
#   FAKE_SANITIZER_DIES  memcheck writes no summary (as when it is killed)
# Like the real racecheck (CUDA 13.0), a racecheck that finds nothing prints no summary.
set -u
tool=memcheck log=/dev/stderr
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --tool) tool=$2; shift 2 ;;
    --log-file) log=$2; shift 2 ;;
    *) shift 2 ;;
  esac
done
"$@"
rc=$?
request=$2
kernel="$(dirname "$request")/kernel.cu"
{
  echo "========= COMPUTE-SANITIZER"
  if [[ $tool == racecheck ]] && grep -q FAKE_RACE "$kernel"; then
    echo "========= Error: Race reported between Write access at matmul_f32+0x1f0 in kernel.cu:21"
    echo "=========     and Read access at matmul_f32+0x230 in kernel.cu:24 [1024 hazards]"
    echo "========= RACECHECK SUMMARY: 7 hazards displayed (3 errors, 4 warnings)"
  elif [[ $tool == memcheck ]] && grep -q FAKE_SANITIZER_DIES "$kernel"; then
    :  # the tool died before its summary
  elif [[ $tool == memcheck ]] && grep -q FAKE_OOB "$kernel"; then
    echo "========= Invalid __global__ read of size 4 bytes"
    echo "=========     at matmul_f32+0x2a0 in kernel.cu:9"
    echo "========= ERROR SUMMARY: 1160 errors"
  elif [[ $tool == racecheck ]]; then
    :  # racecheck on CUDA 13.0 prints no summary when it finds nothing
  else
    echo "========= ERROR SUMMARY: 0 errors"
  fi
} >"$log"
exit $rc
