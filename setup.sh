#!/usr/bin/env bash
# Sets up everything this repo needs on Debian 12, then runs the given command
# inside the project environment:  ./setup.sh scons   |   ./setup.sh pytest
# Idempotent, and quick when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")"
repo=$PWD

missing=()
while read -r pkg; do
  [[ -z $pkg || $pkg == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done < debian-packages.txt
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=(); [[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

venv=$repo/.venv
[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
want=$( (cat requirements.txt requirements-cuda.txt; command -v nvcc || echo "no nvcc on PATH") \
        | sha256sum | cut -d' ' -f1)
have=$(cat "$venv/.requirements.sha256" 2>/dev/null || true)
if [[ $want != "$have" ]]; then
  echo "setup: installing Python packages into .venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt
  if ! command -v nvcc >/dev/null; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements-cuda.txt
  fi
  echo "$want" > "$venv/.requirements.sha256"
fi
oldest=$venv/iree-oldest        # the oldest IREE supported, for tests/e2e/test_iree_oldest.py
want=$(sha256sum < requirements-iree-oldest.txt | cut -d' ' -f1)
if [[ $want != "$(cat "$oldest/.requirements.sha256" 2>/dev/null || true)" ]]; then
  echo "setup: installing the oldest supported IREE into .venv/iree-oldest"
  [[ -x $oldest/bin/python ]] || python3 -m venv "$oldest"
  "$oldest/bin/python" -m pip install -q --disable-pip-version-check -r requirements-iree-oldest.txt
  echo "$want" > "$oldest/.requirements.sha256"
fi

# The library's bytecode, once: where PYTHONDONTWRITEBYTECODE is set (as on many CI machines)
# each scons start would otherwise compile the library again (0.08 s of a no-op).
[[ -d site_scons/iree_kernels/__pycache__ ]] || "$venv/bin/python" -m compileall -q site_scons >/dev/null
export PATH=$venv/bin:$PATH VIRTUAL_ENV=$venv
(($#)) || exit 0
exec "$@"
