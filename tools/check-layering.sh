#!/usr/bin/env bash
# Fails if the layering of DESIGN.md is broken in the sources: the core (core/) includes nothing
# from the platforms, the web glue, the native twin or the tools, and never reaches outside its
# own folders by a relative path; a platform includes no other platform. (The build enforces the
# finer rule, module by module: each sees only its own folders and its dependencies'; see
# cmake/SkvModules.cmake.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fail=0
report() { # <message> <grep output>
  if [[ -n "$2" ]]; then
    echo "check-layering: $1" >&2
    echo "$2" | sed 's/^/  /' >&2
    fail=1
  fi
}
includes() { # <folder>: every #include line of the C++ files under it, as file:line:text
  git ls-files --cached --others --exclude-standard "$1/*.cpp" "$1/*.h" |
    xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]' || true
}
core=$(includes core)
report "core/ includes a platform, web, native or tools header" \
  "$(echo "$core" | grep -E '#[[:space:]]*include[[:space:]]*[<"](platform|web|native|tools|tests)/' || true)"
report "core/ includes by a relative path" \
  "$(echo "$core" | grep -E '#[[:space:]]*include[[:space:]]*[<"]\.\.?/' || true)"
report "core/ uses #ifdef __EMSCRIPTEN__ (the build picks the platform)" \
  "$(git ls-files 'core/*.cpp' 'core/*.h' | xargs -r grep -n '__EMSCRIPTEN__' || true)"
for p in platform/*/; do
  p=${p%/}
  others=$(ls -d platform/*/ | sed 's|/$||' | grep -vx "$p" | paste -sd'|')
  [[ -z "$others" ]] && continue
  report "$p includes another platform" \
    "$(includes "$p" | grep -E "#[[:space:]]*include[[:space:]]*[<\"]($others)/" || true)"
done
[[ $fail -eq 0 ]] || exit 1
echo "check-layering: core and platforms keep to their layers"
