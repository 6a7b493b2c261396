#!/usr/bin/env bash
# Fails if any C++ file in the repository differs from clang-format's output (.clang-format at
# the root). Fix with: git ls-files '*.cpp' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h')
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/skv-format.$$; then
  grep -E "^[^ ].*(warning|error):" /tmp/skv-format.$$ | cut -d: -f1 | sort -u | sed 's/^/not formatted: /' >&2
  rm -f /tmp/skv-format.$$
  exit 1
fi
rm -f /tmp/skv-format.$$
echo "check-format: ${#files[@]} files formatted"
