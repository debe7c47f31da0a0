#!/usr/bin/env bash
# Where a clean build's time goes, step by step, beside a plain iree-compile of the same model:
#   bash bench/step_times.sh MODEL.mlir TARGET [TARGET ...]
# builds MODEL (no kernels) in a new repo under $TMPDIR with scons --debug=time, per target,
# and prints each step's line with its command execution time, then the plain compile's.
# NOOPS=N times N no-op runs after the build; VARIABLES="EXECUTABLE_CACHE=llvm-cpu ..." are
# passed to every scons run.
set -euo pipefail
repo_root=$(cd "$(dirname "$0")/.." && pwd)
model=$(realpath "$1"); shift
compiler=$(cd "$repo_root/site_scons" && python3 -c \
  'from iree_kernels.core import toolchains; print(toolchains.iree_compile())')
for target in "$@"; do
  work=$(mktemp -d); mkdir -p "$work/models" "$work/kernels"
  cp "$repo_root/SConstruct" "$work/"
  cp "$model" "$work/models/m.mlir"
  printf '[models.m]\nsource = "models/m.mlir"\ntargets = ["%s"]\n' "$target" > "$work/kernels/k.toml"
  echo "== $target: $(basename "$model") ($(du -Lh "$model" | cut -f1))"
  start=$(date +%s%N)
  (cd "$work" && env -u PYTHONDONTWRITEBYTECODE timeout 1800 scons --site-dir="$repo_root/site_scons" \
     -Q -j"$(nproc)" ${VARIABLES:-} --debug=time) | grep -E "^Command execution time: |^Total" \
     | grep -v "modules:" | sed "s|$work/||"
  echo "scons wall: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  for _ in $(seq "${NOOPS:-0}"); do
    start=$(date +%s%N)
    (cd "$work" && env -u PYTHONDONTWRITEBYTECODE timeout 600 scons --site-dir="$repo_root/site_scons" \
       -Q -j"$(nproc)" ${VARIABLES:-} >/dev/null)
    echo "no-op: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  done
  start=$(date +%s%N)
  (cd "$work" && timeout 1800 "$compiler" models/m.mlir @build/"$target"/m/options.flags -o /dev/null)
  echo "plain iree-compile: $(( ($(date +%s%N) - start) / 1000000 )) ms"
  rm -rf "$work"
done
