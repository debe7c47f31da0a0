#!/usr/bin/env bash
# Fills .perf/ (ignored by git) with what bench/gpu_machine.sh unpacks on the GPU machine, which
# has no registry access and a 64 MiB carry limit (../shared/notes/iree-compile-on-the-gpu-machine.md):
#   bash bench/fill_gpu_carry.sh [--models onnx_resnet50,torch_layers,inception_v1] [--without-compiler]
# The compiler (iree-base-compiler's cp312 wheel, its libIREECompiler.so zstd'ed: about 4 min on
# 2 cores), scons, zstd, glslangValidator and spirv-val (Debian's, unpacked aside), iree-run-module
# and iree-benchmark-module, and the models named (onnx_*: the corpus's dense ONNX nets; torch_*:
# its torch exports; other names: the onnx package's light models), as bench/dense_resources.py's blobs.
# --without-compiler: for the GPU tests, which compile nothing there (pre-built here).
# --without-benchmark: no iree-benchmark-module (the hotspots tests need it), where the carry
# (64 MiB with the working tree) would not fit.
set -euo pipefail
cd "$(dirname "$0")/.."
models=onnx_resnet50,torch_layers
compiler=yes
benchmark=yes
while (($#)); do
  case $1 in
    --models) models=$2; shift 2 ;;
    --without-compiler) compiler=no; shift ;;
    --without-benchmark) benchmark=no; shift ;;
    *) echo "fill_gpu_carry: unknown argument $1" >&2; exit 2 ;;
  esac
done
grep -qx '/.perf/' .git/info/exclude 2>/dev/null || echo /.perf/ >> .git/info/exclude
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p .perf "$work/tools/bin" "$work/tools/models" "$work/debs"
python=.venv/bin/python
"$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 -d "$work" \
  iree-base-compiler==3.13.0 scons==4.11.1
(cd "$work" && mkdir -p c s && unzip -q -o iree_base_compiler-*.whl -d c && unzip -q -o scons-*.whl -d s)
(cd "$work/s" && tar cf - SCons) | zstd -q -19 > .perf/scons.tar.zst
if [[ $compiler == yes ]]; then
  (cd "$work/c" && tar cf - --exclude=libIREECompiler.so iree iree_base_compiler-*.dist-info) \
    | zstd -q -19 > .perf/compiler-rest.tar.zst
  zstd -q -f --ultra -22 --long=30 -T0 "$work/c/iree/compiler/_mlir_libs/libIREECompiler.so" \
    -o .perf/libIREECompiler.so.zst
else
  rm -f .perf/compiler-rest.tar.zst .perf/libIREECompiler.so.zst
fi
(cd "$work/debs" && apt-get download -q glslang-tools spirv-tools >/dev/null)
for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$work/debs/root"; done
cp "$work/debs/root/usr/bin/glslangValidator" "$work/debs/root/usr/bin/spirv-val" "$work/tools/bin/"
runtime=$("$python" -c 'import iree._runtime_libs as r, os; print(os.path.dirname(r.__file__))')
cp "$runtime/iree-run-module" "$work/tools/bin/"
[[ $benchmark == yes ]] && cp "$runtime/iree-benchmark-module" "$work/tools/bin/"
IFS=, read -ra names <<< "$models"
for name in "${names[@]}"; do
  [[ -n $name ]] || continue
  if [[ $name == torch_* ]]; then
    "$python" -m bench.corpus "$work/corpus" --only "$name" --scale 16 >/dev/null
    model=$work/corpus/$name.mlir
    if [[ -f $work/corpus/$name.pt2 ]]; then      # a .pt2: imported as the build imports it
      "$python" -P site_scons/iree_kernels/data/import_torch.py "$work/corpus/$name.pt2" \
        -o "$model"
    fi
  elif [[ $name != onnx_* ]]; then          # the onnx package's light model of that name
    light=$("$python" -c 'import onnx, os, sys; print(os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light", f"light_{sys.argv[1]}.onnx"))' "$name")
    .venv/bin/iree-import-onnx "$light" --opset-version 17 -o "$work/$name.mlir"
    model=$work/$name.mlir
  else
    "$python" -m bench.corpus "$work/corpus" --only "$name" --onnx "${name#onnx_}" >/dev/null
    .venv/bin/iree-import-onnx "$work/corpus/$name.onnx" --opset-version 17 -o "$work/$name.mlir"
    model=$work/$name.mlir
  fi
  "$python" -m bench.dense_resources strip "$model" "$work/tools/models/$name.blobs"
done
tar cf - -C "$work/tools" . | zstd -q -19 > .perf/tools.tar.zst
"$python" -c 'import lzma, shutil, sys; shutil.copyfileobj(open(sys.argv[1], "rb"), lzma.open(sys.argv[2], "wb", preset=9))' \
  "$(command -v zstd)" .perf/zstd.xz
rm -f .perf/zstd
du -sh .perf/* | sed 's/^/fill_gpu_carry: /'
