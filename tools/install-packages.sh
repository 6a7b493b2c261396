#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not installed yet (as root, or
# through sudo), quietly. tools/setup.sh and tools/bench.sh list what they need and call this.
#
#   tools/install-packages.sh <tag> <package>...     (<tag> prefixes the messages, e.g. setup)
set -euo pipefail
TAG=${1:?usage: $0 <tag> <package>...}
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "[$TAG] every package is installed"
  exit 0
fi
SUDO=()
[[ $(id -u) -eq 0 ]] || SUDO=(sudo)
echo "[$TAG] installing: ${missing[*]}"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
