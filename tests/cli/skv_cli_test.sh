#!/usr/bin/env bash
# Drives the skv tool through every command against a fresh directory and checks its output and
# exit statuses.   usage: skv_cli_test.sh <path to skv> <scratch dir>
set -euo pipefail
SKV=${1:?usage: $0 <skv> <scratch dir>}
WORK=${2:?usage: $0 <skv> <scratch dir>}
rm -rf "$WORK"
mkdir -p "$WORK"
DB="$WORK/db"
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*" >&2
}
# expect <description> <expected stdout> -- <command...>: exit 0 and exactly that output.
expect() {
  local what=$1 want=$2
  shift 3
  local got rc=0
  got=$("$@" 2>"$WORK/stderr") || rc=$?
  if [[ $rc -ne 0 ]]; then
    fail "$what: exit $rc ($(cat "$WORK/stderr"))"
  elif [[ "$got" != "$want" ]]; then
    fail "$what: got [$got] want [$want]"
  else
    ok
  fi
}
# expect_exit <description> <status> <stderr pattern> -- <command...>
expect_exit() {
  local what=$1 want=$2 pattern=$3
  shift 4
  local rc=0
  "$@" >/dev/null 2>"$WORK/stderr" || rc=$?
  if [[ $rc -ne $want ]]; then
    fail "$what: exit $rc, want $want ($(cat "$WORK/stderr"))"
  elif ! grep -q -- "$pattern" "$WORK/stderr"; then
    fail "$what: stderr [$(cat "$WORK/stderr")] lacks [$pattern]"
  else
    ok
  fi
}

help=$("$SKV" --help) && grep -q "^usage: skv" <<<"$help" && ok || fail "--help"
expect_exit "no arguments" 2 "usage" -- "$SKV"
expect_exit "unknown command" 2 "unknown command" -- "$SKV" frobnicate "$DB"
expect_exit "wrong arity" 2 "takes 3" -- "$SKV" set "$DB" onlykey
expect_exit "bad option" 2 "does not take --reverse" -- "$SKV" get "$DB" k --reverse
expect_exit "bad escape" 2 "bad escape" -- "$SKV" set "$DB" 'a\q' v
expect_exit "bad limit" 2 "non-negative" -- "$SKV" scan "$DB" --limit x
expect_exit "get on a missing database" 1 "skv: get:" -- "$SKV" get "$WORK/absent" k
[[ ! -e "$WORK/absent" ]] && ok || fail "get on a missing database created it"
# A folder of someone else's files is not a database: every command that does not create one
# refuses it by name and leaves it exactly as it was.
PLAIN="$WORK/plain"
mkdir -p "$PLAIN"
echo "my notes" >"$PLAIN/notes.txt"
echo "half a download" >"$PLAIN/video.mp4.partial"
before=$(cd "$PLAIN" && ls -la --time-style=+%s.%N && sha256sum ./*)
for cmd in "get $PLAIN k" "del $PLAIN k" "scan $PLAIN" "count $PLAIN" "stats $PLAIN" \
           "flush $PLAIN" "compact $PLAIN"; do
  # shellcheck disable=SC2086
  expect_exit "$cmd on a plain folder" 1 "not an skv database" -- "$SKV" $cmd
done
after=$(cd "$PLAIN" && ls -la --time-style=+%s.%N && sha256sum ./*)
[[ "$before" == "$after" ]] && ok || fail "a refused open changed the folder: [$before] -> [$after]"

# Writes, including binary bytes and a backslash.
for i in 1 2 3 4 5; do
  expect "set user:00$i" "" -- "$SKV" set "$DB" "user:00$i" "name-$i"
done
expect "set other" "" -- "$SKV" set "$DB" "zz:other" "x"
expect "set binary" "" -- "$SKV" set "$DB" 'bin:\x00\xff' 'tab\x09back\\slash'
expect "get" "name-3" -- "$SKV" get "$DB" user:003
expect "get binary (escaped)" 'tab\x09back\\slash' -- "$SKV" get "$DB" 'bin:\x00\xff'
expect "get binary (raw)" "$(printf 'tab\tback\\slash')" -- "$SKV" get "$DB" 'bin:\x00\xff' --raw
expect_exit "get missing" 1 "not_found\|not found" -- "$SKV" get "$DB" user:999

# Scans.
expect "scan prefix" "$(printf 'user:001\tname-1\nuser:002\tname-2\nuser:003\tname-3\nuser:004\tname-4\nuser:005\tname-5')" \
  -- "$SKV" scan "$DB" --prefix user:
expect "scan reverse limit" "$(printf 'user:005\tname-5\nuser:004\tname-4')" \
  -- "$SKV" scan "$DB" --prefix user: --reverse --limit 2
expect "scan keys-only range" "$(printf 'user:002\nuser:003')" \
  -- "$SKV" scan "$DB" --start user:002 --end user:004 --keys-only
expect "scan prefix within range" "user:005" \
  -- "$SKV" scan "$DB" --prefix user: --start user:005 --keys-only
expect "scan all keys" "$(printf 'bin:\\x00\\xff\nuser:001\nuser:002\nuser:003\nuser:004\nuser:005\nzz:other')" \
  -- "$SKV" scan "$DB" --keys-only
expect "scan empty range" "" -- "$SKV" scan "$DB" --start user:003 --end user:003
expect "count all" "7" -- "$SKV" count "$DB"
expect "count prefix" "5" -- "$SKV" count "$DB" --prefix user:

# Deletes survive reopening (every command reopens the tree).
expect "del" "" -- "$SKV" del "$DB" user:002
expect "del missing key" "" -- "$SKV" del "$DB" user:999
expect_exit "get deleted" 1 "not_found\|not found" -- "$SKV" get "$DB" user:002
expect "count after del" "4" -- "$SKV" count "$DB" --prefix user:

# Maintenance commands keep the data.
expect "flush" "flushed $DB" -- "$SKV" flush "$DB"
expect "compact" "compacted $DB" -- "$SKV" compact "$DB"
expect "get after compact" "name-4" -- "$SKV" get "$DB" user:004
expect "count after compact" "6" -- "$SKV" count "$DB"
stats=$("$SKV" stats "$DB" 2>&1) && ok || fail "stats: $stats"
grep -q "^last_sequence" <<<"$stats" && ok || fail "stats lacks last_sequence: $stats"
grep -q "^L0 " <<<"$stats" && ok || fail "stats lacks levels: $stats"

# Versioned databases: set --at, get-at, history and scan --at. The tool opens a database as it
# was created, versioned or not, without being told.
VDB="$WORK/vdb"
expect_exit "set --at on an unversioned database" 1 "not_supported" -- "$SKV" set "$DB" k v --at 5
expect_exit "get-at on an unversioned database" 1 "not_supported" -- "$SKV" get-at "$DB" user:001 5
expect_exit "history on an unversioned database" 1 "not_supported" -- "$SKV" history "$DB" user:001
expect_exit "scan --at on an unversioned database" 1 "not_supported" -- "$SKV" scan "$DB" --at 5
expect_exit "--versioned on an unversioned database" 1 "not versioned" \
  -- "$SKV" set "$DB" k v --versioned
expect "the refused writes changed nothing" "6" -- "$SKV" count "$DB"
expect_exit "timestamp past 2^63 - 1" 2 "timestamp must be a number from 0 to 9223372036854775807" \
  -- "$SKV" get-at "$DB" k 9223372036854775808
expect_exit "negative timestamp" 2 "got '-1'" -- "$SKV" get-at "$DB" k -1
expect_exit "fractional timestamp" 2 "got '1.5'" -- "$SKV" scan "$DB" --at 1.5
expect_exit "timestamp with a sign" 2 "got '+5'" -- "$SKV" set "$DB" k v --at +5
expect_exit "--at without a value" 2 "needs a value" -- "$SKV" scan "$DB" --at
expect_exit "history takes no --reverse" 2 "does not take --reverse" \
  -- "$SKV" history "$DB" k --reverse
expect_exit "get-at needs a timestamp" 2 "takes 3" -- "$SKV" get-at "$DB" k
expect_exit "get-at on a missing database" 1 "skv: get-at:" -- "$SKV" get-at "$WORK/absent" k 1
[[ ! -e "$WORK/absent" ]] && ok || fail "get-at on a missing database created it"

expect "create versioned, v1 at 100" "" -- "$SKV" set "$VDB" doc v1 --versioned --at 100
expect "v3 at 300" "" -- "$SKV" set "$VDB" doc v3 --at 300
expect "v2 at 200, in the past" "" -- "$SKV" set "$VDB" doc v2 --at 200 --versioned
expect "other at 150" "" -- "$SKV" set "$VDB" other o1 --at 150
expect "binary at 50" "" -- "$SKV" set "$VDB" 'bin\x00' 'a\x00b\\c' --at 50
expect_exit "set --at 0 is refused" 1 "invalid_argument" -- "$SKV" set "$VDB" doc v0 --at 0
expect "stats: versioned" "versioning           on, retention_ns 0" \
  -- bash -c "'$SKV' stats '$VDB' | grep '^versioning'"
expect "stats: not versioned" "versioning           off" \
  -- bash -c "'$SKV' stats '$DB' | grep '^versioning'"
history_want=$(printf '300\tv3\n200\tv2\n100\tv1')
expect "history" "$history_want" -- "$SKV" history "$VDB" doc
expect "history --limit 2" "$(printf '300\tv3\n200\tv2')" -- "$SKV" history "$VDB" doc --limit 2
expect "history of binary bytes" "$(printf '50\ta\\x00b\\\\c')" -- "$SKV" history "$VDB" 'bin\x00'
expect "history of a key never written" "" -- "$SKV" history "$VDB" nothing
expect "get-at between versions" "v2" -- "$SKV" get-at "$VDB" doc 250
expect "get-at on a version" "v3" -- "$SKV" get-at "$VDB" doc 300
expect "get-at the largest timestamp" "v3" -- "$SKV" get-at "$VDB" doc 9223372036854775807
expect "get-at --raw" "$(printf 'a\0b\\c' | tr -d '\0')" \
  -- bash -c "'$SKV' get-at '$VDB' 'bin\\x00' 60 --raw | tr -d '\\0'"
expect_exit "get-at before the first version" 1 "not_found" -- "$SKV" get-at "$VDB" doc 99
expect "scan --at" "$(printf 'doc\tv1\nother\to1')" -- "$SKV" scan "$VDB" --at 160 --start c
expect "scan --at --reverse" "$(printf 'other\to1\ndoc\tv1\nbin\\x00\ta\\x00b\\\\c')" \
  -- "$SKV" scan "$VDB" --at 160 --reverse
expect "scan --at --keys-only" "$(printf 'bin\\x00\ndoc')" -- "$SKV" scan "$VDB" --at 120 --keys-only
expect "scan --at 0" "" -- "$SKV" scan "$VDB" --at 0

# A delete (at the commit's time, after every version above) hides the key now, not before.
expect "del doc" "" -- "$SKV" del "$VDB" doc
expect_exit "get after del" 1 "not_found" -- "$SKV" get "$VDB" doc
expect "get-at before the delete" "v2" -- "$SKV" get-at "$VDB" doc 250
expect "history hides the delete" "$history_want" -- "$SKV" history "$VDB" doc
tombstones=$("$SKV" history "$VDB" doc --tombstones) && ok || fail "history --tombstones"
[[ $(head -n 1 <<<"$tombstones") =~ ^[0-9]+\ deleted$ ]] && ok \
  || fail "history --tombstones: first line [$(head -n 1 <<<"$tombstones")]"
[[ $(tail -n +2 <<<"$tombstones") == "$history_want" ]] && ok \
  || fail "history --tombstones: [$tombstones]"
# A plain set (commit time) on a versioned database, and the versions through flush and compact.
expect "set without --at" "" -- "$SKV" set "$VDB" doc v4
now=$("$SKV" history "$VDB" doc --limit 1) && ok || fail "history --limit 1"
[[ $now =~ ^[0-9]{19}$'\t'v4$ ]] && ok || fail "a commit's timestamp is the time now: [$now]"
expect "flush versioned" "flushed $VDB" -- "$SKV" flush "$VDB"
expect "compact versioned" "compacted $VDB" -- "$SKV" compact "$VDB"
expect "history after compact" "$(printf '%s\n%s' "$now" "$history_want")" \
  -- "$SKV" history "$VDB" doc
expect "get-at after compact" "v1" -- "$SKV" get-at "$VDB" doc 199

# The demo runs, twice on the same directory.
for round in 1 2; do
  out=$("$SKV" demo "$WORK/demo" 2>&1) && ok || fail "demo round $round: $out"
  grep -q "second -> conflict" <<<"$out" && ok || fail "demo round $round shows no conflict: $out"
done
expect "demo data readable" '{"handle":"heron","city":"Bergen"}' -- "$SKV" get "$WORK/demo" user:002

echo "skv cli: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
