#!/usr/bin/env bash
# Checks a build made with -DSKV_ENCRYPTION=OFF (docs/encryption.md): its skv tool links no
# libsodium, refuses a key file with invalid_argument and creates nothing, and works as usual on a
# plaintext database.
#   tests/cli/no_encryption_check.sh <build dir holding skv>
set -euo pipefail
SKV="$1/skv"
fail() { echo "no_encryption_check: $*" >&2; exit 1; }
[[ -x $SKV ]] || fail "no skv at $SKV"
if ldd "$SKV" | grep -q sodium; then fail "the tool links libsodium"; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
head -c 32 /dev/urandom >"$T/key"
chmod 600 "$T/key"
set +e
err=$("$SKV" set "$T/db" k v --key-file "$T/key" 2>&1 >/dev/null)
rc=$?
set -e
[[ $rc -eq 2 ]] || fail "set with a key file: exit $rc, want 2"
[[ $err == *"invalid_argument"*"no encryption (SKV_ENCRYPTION=OFF)"* ]] ||
  fail "set with a key file: unexpected message: $err"
[[ ! -e $T/db ]] || fail "a refused open created $T/db"
"$SKV" set "$T/plain" k v >/dev/null
[[ $("$SKV" get "$T/plain" k) == v ]] || fail "a plaintext database does not read back"
"$SKV" enc-info "$T/plain" | grep -q '^CURRENT plain' || fail "enc-info on a plaintext database"
echo "no_encryption_check: refused with invalid_argument, nothing created, no libsodium linked"
