#!/usr/bin/env bash
# Runs a command on the GPU machine (16 cores, no registry access) with what this repo's build
# needs, carried from here in .perf/ (ignored by git; how to fill it below):
#   bash bench/gpu_machine.sh python3 bench/real_models.py --models layers --targets cuda
# iree-compile and its Python package, scons, glslangValidator and spirv-val (Debian .debs,
# unpacked aside, not into /), iree-run-module and iree-benchmark-module, imported ONNX models.
#
# Filling .perf/ here (see ../shared/notes/iree-compile-on-the-gpu-machine.md):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d /tmp/w iree-base-compiler==3.13.0 scons==4.11.1
#   unzip the compiler wheel into /tmp/w/c; zstd --ultra -22 --long=30 its
#   iree/compiler/_mlir_libs/libIREECompiler.so into .perf/libIREECompiler.so.zst and tar+zstd
#   the rest into .perf/compiler-rest.tar.zst; copy the scons wheel and /usr/bin/zstd to .perf/;
#   apt-get download glslang-tools spirv-tools into .perf/debs/; copy the runtime tools from
#   .venv/lib/python3.11/site-packages/iree/_runtime_libs/ into .perf/bin/; put models imported
#   with iree-import-onnx into .perf/models/.
set -euo pipefail
carried=$PWD/.perf
mkdir -p /tmp/site /tmp/bin /tmp/debs
cp "$carried/zstd" /tmp/bin/
export PATH=/tmp/bin:$PATH
zstd -dc "$carried/compiler-rest.tar.zst" | tar x -C /tmp/site
zstd -d -q -f --long=30 "$carried/libIREECompiler.so.zst" \
  -o /tmp/site/iree/compiler/_mlir_libs/libIREECompiler.so
for deb in "$carried"/debs/*.deb; do dpkg -x "$deb" /tmp/debs; done
cp "$carried"/bin/* /tmp/bin/
site=$(python3 -c 'import jinja2, os; print(os.path.dirname(os.path.dirname(jinja2.__file__)))')
python3 -m venv /tmp/venv
echo "$site" > "$(echo /tmp/venv/lib/python3*/site-packages)/image.pth"
/tmp/venv/bin/pip install -q --no-index --no-deps "$carried"/scons-*.whl
export PYTHONPATH=/tmp/site:$PWD/site_scons IREE_KERNELS_BENCH_MODELS=$carried/models
export PATH=/tmp/venv/bin:/tmp/debs/usr/bin:/tmp/bin:$PATH
export LD_LIBRARY_PATH=/tmp/debs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
exec "$@"
