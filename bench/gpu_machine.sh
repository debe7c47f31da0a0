#!/usr/bin/env bash
# Runs a command on the GPU machine (16 cores, no registry access) with what this repo's build
# needs, carried from here in .perf/ (ignored by git; how to fill it below):
#   bash bench/gpu_machine.sh python3 -m bench.real_models --models layers --targets cuda
# iree-compile and its Python package, scons, glslangValidator and spirv-val (Debian .debs,
# unpacked aside, not into /), iree-run-module and iree-benchmark-module, imported ONNX models.
#
# Filling .perf/ here (see ../shared/notes/iree-compile-on-the-gpu-machine.md; the carry limit
# is 64 MiB, so everything is zstd-compressed):
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 -d /tmp/w iree-base-compiler==3.13.0 scons==4.11.1
#   unzip the compiler wheel into /tmp/w/c; zstd --ultra -22 --long=30 its
#   iree/compiler/_mlir_libs/libIREECompiler.so into .perf/libIREECompiler.so.zst; tar+zstd the
#   rest of it into .perf/compiler-rest.tar.zst and the scons wheel's SCons/ into
#   .perf/scons.tar.zst; tar+zstd into .perf/tools.tar.zst a folder holding bin/ (glslangValidator
#   and spirv-val from Debian's glslang-tools and spirv-tools, statically linked; iree-run-module
#   and iree-benchmark-module from .venv/lib/python3.11/site-packages/iree/_runtime_libs/) and
#   models/ (models imported here: <name>.mlir, or for dense weights <name>.blobs written by
#   bench/dense_resources.py strip, refilled there); xz /usr/bin/zstd into .perf/zstd.xz;
#   tar+zstd into .perf/dask.tar.zst the cp312 wheels of requirements.txt's Dask block, unzipped,
#   without dask/{array,bag,dataframe}, tests, the dashboard's static files and fsspec.
set -euo pipefail
carried=$PWD/.perf
mkdir -p /tmp/site /tmp/bin /tmp/tools
python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  "$carried/zstd.xz" /tmp/bin/zstd          # xz: Python reads it, and it is a third of zstd's size
chmod +x /tmp/bin/zstd
export PATH=/tmp/bin:$PATH
zstd -dc "$carried/tools.tar.zst" | tar x -C /tmp/tools
zstd -dc "$carried/scons.tar.zst" | tar x -C /tmp/site
if [[ -f $carried/libIREECompiler.so.zst ]]; then
  zstd -dc "$carried/compiler-rest.tar.zst" | tar x -C /tmp/site
  zstd -d -q -f --long=30 "$carried/libIREECompiler.so.zst" \
    -o /tmp/site/iree/compiler/_mlir_libs/libIREECompiler.so
fi
if [[ -f $carried/dask.tar.zst ]]; then     # Dask and its dependencies (bench/remote_steps.py)
  zstd -dc "$carried/dask.tar.zst" | tar x -C /tmp/site
fi
for blobs in /tmp/tools/models/*.blobs; do
  if [[ -e $blobs ]]; then python3 -m bench.dense_resources fill "$blobs" "${blobs%.blobs}.mlir"; fi
done
site=$(python3 -c 'import jinja2, os; print(os.path.dirname(os.path.dirname(jinja2.__file__)))')
python3 -m venv /tmp/venv
printf "%s\n/tmp/site\n" "$site" > "$(echo /tmp/venv/lib/python3*/site-packages)/image.pth"     # the build's own Python runs (the ONNX importer) see the compiler too
printf '#!/tmp/venv/bin/python\nimport SCons.Script\nSCons.Script.main()\n' > /tmp/venv/bin/scons
chmod +x /tmp/venv/bin/scons
export PYTHONPATH=/tmp/site:$PWD/site_scons IREE_KERNELS_BENCH_MODELS=/tmp/tools/models
export PATH=/tmp/venv/bin:/tmp/tools/bin:$PATH
exec "$@"
