#!/usr/bin/env bash
# Runs a Python tool pinned in bin/python-tools.txt: `bin/python-tools.sh cfn-lint --version`.
# The virtual environment lives outside the checkout, in ${XDG_CACHE_HOME:-$HOME/.cache}/dss/python-tools-<hash>, named
# after the requirements file's hash: checkouts with the same pins share it, and a changed pin makes a new one.
set -euo pipefail

if [ "$#" -lt 1 ]; then
  echo "usage: $0 <tool> [arguments...]   (a tool installed from bin/python-tools.txt, e.g. cfn-lint)" >&2
  exit 2
fi
tool=$1
shift

requirements="$(cd "$(dirname "$0")" && pwd)/python-tools.txt"
hash=$(sha256sum "$requirements" | cut -c1-16)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dss"
venv="$cache/python-tools-$hash"

# The marker is written last, so a folder without it is an interrupted install, rebuilt rather than trusted. The lock
# keeps two runs at once (parallel lint jobs, two checkouts) from building the same folder together; it is created in
# place rather than renamed into place because a venv's scripts name their interpreter by absolute path.
if [ ! -f "$venv/.installed" ]; then
  mkdir -p "$cache"
  exec 9>"$venv.lock"
  flock 9
  if [ ! -f "$venv/.installed" ]; then
    echo "Installing the Python tools of bin/python-tools.txt into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$requirements" >&2
    touch "$venv/.installed"
  fi
  exec 9>&-
fi

case $tool in
  */* | "") echo "$0: a tool's name, not a path: $tool" >&2; exit 2 ;;
esac
if [ ! -x "$venv/bin/$tool" ]; then
  echo "$0: $tool is not installed by bin/python-tools.txt (in $venv/bin)" >&2
  exit 2
fi
exec "$venv/bin/$tool" "$@"
