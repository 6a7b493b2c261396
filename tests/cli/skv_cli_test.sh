#!/usr/bin/env bash
# Drives the skv tool through every command against a fresh directory and checks its output and
# exit statuses.   usage: skv_cli_test.sh <path to skv> <scratch dir>
set -euo pipefail
SKV=${1:?usage: $0 <skv> <scratch dir>}
WORK=${2:?usage: $0 <skv> <scratch dir>}
rm -rf "$WORK"
mkdir -p "$WORK"
DB="$WORK/db"
unset SKV_KEY_FILE  # the encryption tests below set it where they mean to
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

# js <expression>: evaluates a JavaScript expression with `o` bound to the JSON object on stdin
# and prints the result (node only; the JSON checks that need it are skipped without node).
js() { node -e 'const o=JSON.parse(require("fs").readFileSync(0,"utf8")); console.log(String(eval(process.argv[1])))' "$1"; }
HAVE_NODE=$(command -v node >/dev/null && echo 1 || echo 0)

help=$("$SKV" --help) && grep -q "^Usage: skv" <<<"$help" && ok || fail "--help"
grep -q "enc-info" <<<"$help" && grep -q "verify" <<<"$help" && grep -q "Exit status" <<<"$help" \
  && ok || fail "--help lacks enc-info, verify or the exit statuses"
for cmd in get scan checkpoint; do
  out=$("$SKV" "$cmd" --help) && grep -q -- "--key-file" <<<"$out" && ok || fail "$cmd --help: $out"
  [[ "$("$SKV" help "$cmd")" == "$out" ]] && ok || fail "skv help $cmd differs from $cmd --help"
done
expect_exit "help of no such command" 2 "no command 'frob'" -- "$SKV" help frob
version=$("$SKV" --version) && grep -q "^skv [0-9]*\.[0-9]*\.[0-9]* (format version" <<<"$version" \
  && ok || fail "--version: $version"
expect_exit "no arguments" 2 "usage" -- "$SKV"
expect_exit "unknown command" 2 "unknown command" -- "$SKV" frobnicate "$DB"
expect_exit "wrong arity" 2 "value is required" -- "$SKV" set "$DB" onlykey
expect_exit "bad option" 2 "not expected: --reverse" -- "$SKV" get "$DB" k --reverse
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
expect_exit "set --at on an unversioned database" 3 "not_supported" -- "$SKV" set "$DB" k v --at 5
expect_exit "get-at on an unversioned database" 3 "not_supported" -- "$SKV" get-at "$DB" user:001 5
expect_exit "history on an unversioned database" 3 "not_supported" -- "$SKV" history "$DB" user:001
expect_exit "scan --at on an unversioned database" 3 "not_supported" -- "$SKV" scan "$DB" --at 5
expect_exit "--versioned on an unversioned database" 2 "not versioned" \
  -- "$SKV" set "$DB" k v --versioned
expect "the refused writes changed nothing" "6" -- "$SKV" count "$DB"
expect_exit "timestamp past 2^63 - 1" 2 "timestamp must be a number from 0 to 9223372036854775807" \
  -- "$SKV" get-at "$DB" k 9223372036854775808
expect_exit "negative timestamp" 2 "got '-1'" -- "$SKV" get-at "$DB" k -1
expect_exit "fractional timestamp" 2 "got '1.5'" -- "$SKV" scan "$DB" --at 1.5
expect_exit "timestamp with a sign" 2 "got '+5'" -- "$SKV" set "$DB" k v --at +5
expect_exit "--at without a value" 2 "--at: 1 required" -- "$SKV" scan "$DB" --at
expect_exit "history takes no --reverse" 2 "not expected: --reverse" \
  -- "$SKV" history "$DB" k --reverse
expect_exit "get-at needs a timestamp" 2 "ts is required" -- "$SKV" get-at "$DB" k
expect_exit "get-at on a missing database" 1 "skv: get-at:" -- "$SKV" get-at "$WORK/absent" k 1
[[ ! -e "$WORK/absent" ]] && ok || fail "get-at on a missing database created it"

expect "create versioned, v1 at 100" "" -- "$SKV" set "$VDB" doc v1 --versioned --at 100
expect "v3 at 300" "" -- "$SKV" set "$VDB" doc v3 --at 300
expect "v2 at 200, in the past" "" -- "$SKV" set "$VDB" doc v2 --at 200 --versioned
expect "other at 150" "" -- "$SKV" set "$VDB" other o1 --at 150
expect "binary at 50" "" -- "$SKV" set "$VDB" 'bin\x00' 'a\x00b\\c' --at 50
expect_exit "set --at 0 is refused" 2 "invalid_argument" -- "$SKV" set "$VDB" doc v0 --at 0
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

# Encryption at rest: a database created with a key file is sealed; every command takes
# --key-file (or SKV_KEY_FILE) and --key-id; a refused key or open changes nothing; enc-info shows
# the envelopes without a key.
# snapshot <dir>: every file's name and contents.
snapshot() { find "$1" -type f -exec sha256sum {} + | sort; }
# refused <description> <stderr pattern> <dir> -- <command...>: exit 3 (a refused key; set
# REFUSED_STATUS for another), the pattern in stderr, and <dir> byte-identical before and after.
refused() {
  local what=$1 pattern=$2 dir=$3
  shift 4
  local before after
  before=$(snapshot "$dir")
  expect_exit "$what" "${REFUSED_STATUS:-3}" "$pattern" -- "$@"
  after=$(snapshot "$dir")
  [[ "$before" == "$after" ]] && ok || fail "$what: the refused command changed $dir"
}
EDB="$WORK/edb"
KEY="$WORK/key"
head -c 32 /dev/urandom >"$KEY"
chmod 600 "$KEY"
WRONG="$WORK/wrong.key"  # 64 hex digits and a newline
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$WRONG"
echo >>"$WRONG"
chmod 600 "$WRONG"
OPEN="$WORK/open.key"  # the right key, readable by everyone
cp "$KEY" "$OPEN"
chmod 644 "$OPEN"
SHORT="$WORK/short.key"
head -c 31 /dev/urandom >"$SHORT"
chmod 600 "$SHORT"
K=(--key-file "$KEY")
for i in 1 2 3; do
  expect "encrypted set $i" "" -- "$SKV" set "$EDB" "canary-key-$i" "canary-value-$i" "${K[@]}"
done
expect "encrypted get" "canary-value-2" -- "$SKV" get "$EDB" canary-key-2 "${K[@]}"
expect "encrypted get, SKV_KEY_FILE" "canary-value-2" \
  -- env SKV_KEY_FILE="$KEY" "$SKV" get "$EDB" canary-key-2
expect "encrypted set, SKV_KEY_FILE" "" \
  -- env SKV_KEY_FILE="$KEY" "$SKV" set "$EDB" canary-key-4 canary-value-4
expect "--key-file wins over SKV_KEY_FILE" "canary-value-4" \
  -- env SKV_KEY_FILE="$WRONG" "$SKV" get "$EDB" canary-key-4 "${K[@]}"
expect "encrypted scan" "$(printf 'canary-key-1\tcanary-value-1\ncanary-key-2\tcanary-value-2\ncanary-key-3\tcanary-value-3\ncanary-key-4\tcanary-value-4')" \
  -- "$SKV" scan "$EDB" "${K[@]}"
expect "encrypted scan, SKV_KEY_FILE" "$(printf 'canary-key-4\ncanary-key-3')" \
  -- env SKV_KEY_FILE="$KEY" "$SKV" scan "$EDB" --reverse --limit 2 --keys-only
expect "encrypted count" "4" -- "$SKV" count "$EDB" "${K[@]}"
expect "encrypted count, SKV_KEY_FILE" "4" -- env SKV_KEY_FILE="$KEY" "$SKV" count "$EDB"
expect "encrypted del" "" -- "$SKV" del "$EDB" canary-key-3 "${K[@]}"
expect "encrypted flush" "flushed $EDB" -- "$SKV" flush "$EDB" "${K[@]}"
expect "encrypted set after flush" "" -- "$SKV" set "$EDB" canary-key-5 canary-value-5 "${K[@]}"
expect "encrypted compact" "compacted $EDB" -- env SKV_KEY_FILE="$KEY" "$SKV" compact "$EDB"
expect "encrypted set after compact" "" \
  -- "$SKV" set "$EDB" canary-key-6 canary-value-6 "${K[@]}"
expect "encrypted count after compact" "5" -- "$SKV" count "$EDB" "${K[@]}"
stats=$("$SKV" stats "$EDB" "${K[@]}" 2>&1) && ok || fail "encrypted stats: $stats"
# A versioned encrypted database, its key given as hex digits under key id 7.
EVDB="$WORK/evdb"
HEXKEY="$WORK/hex.key"
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$HEXKEY"
chmod 600 "$HEXKEY"
H=(--key-file "$HEXKEY" --key-id 7)
expect "encrypted versioned set" "" \
  -- "$SKV" set "$EVDB" doc canary-v1 --versioned --at 100 "${H[@]}"
expect "encrypted versioned set 2" "" -- "$SKV" set "$EVDB" doc canary-v2 --at 200 "${H[@]}"
expect "encrypted history" "$(printf '200\tcanary-v2\n100\tcanary-v1')" \
  -- "$SKV" history "$EVDB" doc "${H[@]}"
expect "encrypted history, SKV_KEY_FILE" "$(printf '200\tcanary-v2')" \
  -- env SKV_KEY_FILE="$HEXKEY" "$SKV" history "$EVDB" doc --limit 1 --key-id 7
expect "encrypted get-at" "canary-v1" -- "$SKV" get-at "$EVDB" doc 150 "${H[@]}"
expect "encrypted scan --at" "$(printf 'doc\tcanary-v1')" -- "$SKV" scan "$EVDB" --at 150 "${H[@]}"
expect "encrypted versioned flush" "flushed $EVDB" -- "$SKV" flush "$EVDB" "${H[@]}"

# Refused: no key, a wrong key, a key id not held, a bad key file, a key for a plaintext database.
# Each names the problem, exits 1 and leaves the directory exactly as it was.
for cmd in "get $EDB canary-key-1" "set $EDB k v" "del $EDB canary-key-1" "scan $EDB" \
           "count $EDB" "stats $EDB" "flush $EDB" "compact $EDB" "history $EVDB doc" \
           "get-at $EVDB doc 150"; do
  dir=${cmd#* }
  dir=${dir%% *}
  # shellcheck disable=SC2086
  refused "$cmd without a key" "encryption/not_configured: .*encrypted.*--key-file" "$dir" \
    -- "$SKV" $cmd
  # shellcheck disable=SC2086
  refused "$cmd with a wrong key" "encryption/wrong_key" "$dir" \
    -- "$SKV" $cmd --key-file "$WRONG" --key-id "$([[ $dir == "$EVDB" ]] && echo 7 || echo 1)"
done
refused "a key id the database does not use" "encryption/unknown_key_id" "$EDB" \
  -- "$SKV" get "$EDB" canary-key-1 "${K[@]}" --key-id 2
refused "SKV_KEY_FILE with a wrong key" "encryption/wrong_key" "$EDB" \
  -- env SKV_KEY_FILE="$WRONG" "$SKV" count "$EDB"
refused "a key file others may read" "key file $OPEN .*mode 0644" "$EDB" \
  -- "$SKV" get "$EDB" canary-key-1 --key-file "$OPEN"
refused "SKV_KEY_FILE others may read" "key file $OPEN .*mode 0644" "$EDB" \
  -- env SKV_KEY_FILE="$OPEN" "$SKV" set "$EDB" k v
REFUSED_STATUS=1 refused "a missing key file" "key file $WORK/nokey does not exist" "$EDB" \
  -- "$SKV" scan "$EDB" --key-file "$WORK/nokey"
refused "a key file of 31 bytes" "invalid_argument: .*$SHORT" "$EDB" \
  -- "$SKV" set "$EDB" k v --key-file "$SHORT"
refused "a key for a plaintext database" "encryption/not_encrypted" "$DB" \
  -- "$SKV" get "$DB" user:001 "${K[@]}"
refused "SKV_KEY_FILE on a plaintext database" "encryption/not_encrypted" "$DB" \
  -- env SKV_KEY_FILE="$KEY" "$SKV" set "$DB" k v
refused "a bad key file on a plaintext database" "mode 0644" "$DB" \
  -- "$SKV" count "$DB" --key-file "$OPEN"
expect_exit "set with a bad key file creates nothing" 3 "mode 0644" \
  -- "$SKV" set "$WORK/never" k v --key-file "$OPEN"
[[ ! -e "$WORK/never" ]] && ok || fail "a refused key file created the database"
expect "the refused commands changed nothing" "5" -- "$SKV" count "$EDB" "${K[@]}"
expect_exit "--key-id 0" 2 "--key-id needs a number" -- "$SKV" get "$EDB" k "${K[@]}" --key-id 0
expect_exit "--key-id without a key file" 2 "needs a key file" -- "$SKV" get "$DB" k --key-id 2
expect_exit "--cipher without a key file" 2 "needs a key file" \
  -- "$SKV" set "$WORK/never" k v --cipher aes-256-gcm
expect_exit "an unknown cipher" 2 "--cipher takes" -- "$SKV" set "$WORK/never" k v --cipher rot13
expect_exit "--cipher is for creating" 2 "not expected: .*--cipher" \
  -- "$SKV" get "$EDB" k "${K[@]}" --cipher xchacha20-poly1305
expect_exit "--key-file without a path" 2 "--key-file: 1 required" -- "$SKV" get "$EDB" k --key-file
[[ ! -e "$WORK/never" ]] && ok || fail "a usage error created a database"
# AES-256-GCM where the CPU has it; refused by name where it does not.
ADB="$WORK/adb"
rc=0
"$SKV" set "$ADB" canary-key-a canary-value-a "${K[@]}" --cipher aes-256-gcm 2>"$WORK/stderr" || rc=$?
if [[ $rc -eq 0 ]]; then
  expect "aes-256-gcm get" "canary-value-a" -- "$SKV" get "$ADB" canary-key-a "${K[@]}"
  expect "aes-256-gcm enc-info" "CURRENT sealed key_id=1 cipher=aes-256-gcm" \
    -- bash -c "'$SKV' enc-info '$ADB' | head -n 1 | cut -d' ' -f1-4"
  REFUSED_STATUS=2 refused "another cipher than the database's" "aes-256-gcm" "$EDB" \
    -- "$SKV" set "$EDB" k v "${K[@]}" --cipher aes-256-gcm
else
  [[ $rc -eq 3 ]] && grep -q "not_supported: .*aes-256-gcm" "$WORK/stderr" && ok \
    || fail "aes-256-gcm refused: exit $rc ($(cat "$WORK/stderr"))"
  [[ ! -e "$ADB" ]] && ok || fail "a refused cipher created the database"
fi

# enc-info: no key, no writes; every file's envelope.
before=$(snapshot "$EDB")
info=$(env -u SKV_KEY_FILE "$SKV" enc-info "$EDB" 2>&1) && ok || fail "enc-info: $info"
[[ "$before" == "$(snapshot "$EDB")" ]] && ok || fail "enc-info changed the database"
[[ $(head -n 1 <<<"$info") =~ ^CURRENT\ sealed\ key_id=1\ cipher=xchacha20-poly1305\ db=([0-9a-f]{32})\ manifest=MANIFEST-[0-9]{6,}$ ]] \
  && ok || fail "enc-info CURRENT line: $(head -n 1 <<<"$info")"
db_id=${BASH_REMATCH[1]:-none}
files=$(find "$EDB" -maxdepth 1 -type f -printf '%f\n' | grep -E '^([0-9]{6,}\.(wal|sst|vlog|tmp)|MANIFEST-[0-9]{6,})$' | LC_ALL=C sort)
[[ -n "$files" ]] && grep -q '\.sst$' <<<"$files" && grep -q '\.wal$' <<<"$files" && ok \
  || fail "the encrypted database has no table or WAL: [$files]"
[[ "$(tail -n +2 <<<"$info" | cut -d' ' -f1)" == "$files" ]] && ok \
  || fail "enc-info lists [$(tail -n +2 <<<"$info" | cut -d' ' -f1)], the directory has [$files]"
# Every file with a header names the cipher, key 1 and the database; a WAL segment nothing was
# written to yet is empty, with no header.
while read -r line; do
  [[ $line =~ \ kind=(wal|table|manifest|vlog)\ number=[0-9]+\ size=[1-9][0-9]*\ cipher=xchacha20-poly1305\ key_id=1\ db=$db_id$ ||
     $line =~ ^[0-9]+\.wal\ kind=wal\ number=[0-9]+\ size=0\ header=none ]] \
    && ok || fail "enc-info line: [$line]"
done < <(tail -n +2 <<<"$info")
# enc-info --json: the same facts as the text, one object.
if [[ $HAVE_NODE == 1 ]]; then
  jinfo=$(env -u SKV_KEY_FILE "$SKV" enc-info "$EDB" --json) && ok || fail "enc-info --json: $jinfo"
  [[ "$(js 'o.current.sealed && o.current.key_id === 1 && o.current.cipher' <<<"$jinfo")" == "xchacha20-poly1305" ]] \
    && ok || fail "enc-info --json current: $jinfo"
  [[ "$(js 'o.current.db' <<<"$jinfo")" == "$db_id" ]] && ok || fail "enc-info --json db id: $jinfo"
  [[ "$(js 'o.files.map(f => f.name).join("\n")' <<<"$jinfo")" == "$files" ]] && ok \
    || fail "enc-info --json lists other files: $jinfo"
  [[ "$(js 'o.files.every(f => f.header === null ? f.size === 0 : f.key_id === 1 && f.db === o.current.db && f.cipher === "xchacha20-poly1305")' <<<"$jinfo")" == "true" ]] \
    && ok || fail "enc-info --json file envelopes: $jinfo"
fi
[[ $(grep -c ' kind=table .* cipher=xchacha20-poly1305 key_id=1 ' <<<"$info") -ge 1 &&
   $(grep -c ' kind=manifest .* cipher=xchacha20-poly1305 key_id=1 ' <<<"$info") -ge 1 ]] \
  && ok || fail "enc-info shows no sealed table or manifest: $info"
expect "enc-info with key id 7" "CURRENT sealed key_id=7" \
  -- bash -c "'$SKV' enc-info '$EVDB' | head -n 1 | cut -d' ' -f1-3"
[[ $("$SKV" enc-info "$EVDB" | tail -n +2 | grep -v ' size=0 header=none' |
     grep -vc ' cipher=xchacha20-poly1305 key_id=7 db=') == 0 ]] \
  && ok || fail "enc-info key id 7: $("$SKV" enc-info "$EVDB")"
info=$("$SKV" enc-info "$DB" 2>&1) && ok || fail "enc-info plaintext: $info"
[[ $(head -n 1 <<<"$info") =~ ^CURRENT\ plain\ manifest=MANIFEST-[0-9]+$ ]] && ok \
  || fail "enc-info plaintext CURRENT: $(head -n 1 <<<"$info")"
[[ $(tail -n +2 <<<"$info" | wc -l) -ge 2 ]] && ok || fail "enc-info plaintext lists: $info"
[[ $(tail -n +2 <<<"$info" | grep -v ' size=0 header=none' |
     grep -vc ' cipher=none key_id=0 db=0\{32\}$') == 0 ]] && ok \
  || fail "enc-info plaintext files: $info"
expect_exit "enc-info on a plain folder" 1 "not an skv database" -- "$SKV" enc-info "$PLAIN"
expect_exit "enc-info on a missing path" 1 "not an skv database" -- "$SKV" enc-info "$WORK/absent"
expect_exit "enc-info takes no key" 2 "not expected: .*--key-file" \
  -- "$SKV" enc-info "$EDB" "${K[@]}"
# A damaged header is listed with its error; the other files still are.
DAMAGED="$WORK/damaged"
cp -r "$EDB" "$DAMAGED"
sst=$(find "$DAMAGED" -maxdepth 1 -name '*.sst' -printf '%f\n' | head -n 1)
printf 'XXXX' | dd of="$DAMAGED/$sst" bs=1 seek=0 conv=notrunc status=none
info=$("$SKV" enc-info "$DAMAGED" 2>&1) && ok || fail "enc-info damaged: $info"
grep -q "^$sst kind=table .* error=corruption: " <<<"$info" && ok \
  || fail "enc-info damaged header: $info"

# No file of the encrypted databases holds a key or a value; the plaintext one does (so the
# search would find them).
encrypted_dirs=("$EDB" "$EVDB")
[[ -d "$ADB" ]] && encrypted_dirs+=("$ADB")
if grep -r -a -l -e canary- "${encrypted_dirs[@]}"; then
  fail "plaintext in an encrypted database"
else
  ok
fi
for i in 1 2 3; do
  expect "plaintext twin set $i" "" -- "$SKV" set "$WORK/twin" "canary-key-$i" "canary-value-$i"
done
expect "plaintext twin flush" "flushed $WORK/twin" -- "$SKV" flush "$WORK/twin"
grep -r -a -q -e canary- "$WORK/twin" && ok || fail "the search finds nothing in a plaintext database"
# Key bytes never appear in any output (the hex key, through every refusal above included).
out=$("$SKV" get "$EVDB" doc "${H[@]}" 2>&1; "$SKV" get "$EVDB" doc --key-file "$HEXKEY" 2>&1
  "$SKV" get "$DB" k --key-file "$HEXKEY" 2>&1; "$SKV" enc-info "$EVDB" 2>&1
  chmod 644 "$HEXKEY"; "$SKV" get "$EVDB" doc "${H[@]}" 2>&1; chmod 600 "$HEXKEY") || true
grep -q -i -F -f "$HEXKEY" <<<"$out" && fail "a key appears in the output: $out" || ok

# Read-only commands change no byte of the database (they open it read-only), also when its
# newest commits are only in its WAL.
expect "set before read-only" "" -- "$SKV" set "$DB" "ro:key" "ro-value"
before=$(snapshot "$DB")
expect "read-only get" "ro-value" -- "$SKV" get "$DB" ro:key
expect "read-only count" "7" -- "$SKV" count "$DB"
"$SKV" scan "$DB" >/dev/null 2>&1 && ok || fail "read-only scan"
"$SKV" stats "$DB" >/dev/null 2>&1 && ok || fail "read-only stats"
expect "checkpoint" "checkpoint: $DB -> $WORK/cp" -- "$SKV" checkpoint "$DB" "$WORK/cp"
[[ "$(snapshot "$DB")" == "$before" ]] && ok || fail "read-only commands changed $DB"

# A checkpoint opens as a database with the same data; a target that exists is refused and
# left as it was; a restore makes a database from a checkpoint.
expect "checkpoint data" "$("$SKV" scan "$DB")" -- "$SKV" scan "$WORK/cp"
mkdir -p "$WORK/taken"
echo "mine" >"$WORK/taken/notes.txt"
taken=$(snapshot "$WORK/taken")
expect_exit "checkpoint into a folder that exists" 2 "already exists" \
  -- "$SKV" checkpoint "$DB" "$WORK/taken"
[[ "$(snapshot "$WORK/taken")" == "$taken" ]] && ok || fail "a refused checkpoint changed the target"
expect_exit "checkpoint of a missing database" 1 "skv: checkpoint:" \
  -- "$SKV" checkpoint "$WORK/absent" "$WORK/cp2"
[[ ! -e "$WORK/absent" && ! -e "$WORK/cp2" ]] && ok || fail "a refused checkpoint created files"
expect_exit "checkpoint needs a target" 2 "target is required" -- "$SKV" checkpoint "$DB"
expect "restore" "restored: $WORK/cp -> $WORK/restored" -- "$SKV" restore "$WORK/cp" "$WORK/restored"
expect "restored data" "$("$SKV" scan "$DB")" -- "$SKV" scan "$WORK/restored"
expect "the restored database takes writes" "" -- "$SKV" set "$WORK/restored" only-here x
expect_exit "the checkpoint does not see them" 1 "not_found" -- "$SKV" get "$WORK/cp" only-here

# An encrypted database's checkpoint is sealed under the same key.
expect "encrypted checkpoint" "checkpoint: $EDB -> $WORK/ecp" \
  -- "$SKV" checkpoint "$EDB" "$WORK/ecp" "${K[@]}"
expect "encrypted checkpoint data" "$("$SKV" scan "$EDB" "${K[@]}")" \
  -- "$SKV" scan "$WORK/ecp" "${K[@]}"
expect_exit "encrypted checkpoint needs its key" 3 "encryption/not_configured" \
  -- "$SKV" get "$WORK/ecp" canary-key-1
if grep -rq "canary-value" "$WORK/ecp"; then fail "a value is in the clear in the checkpoint"; else ok; fi

# Bytes in and out: valid UTF-8 as it is, control characters and other bytes escaped; --hex
# both ways; a value from standard input; --json is valid JSON (one object per line).
BDB="$WORK/bytes"
expect "set UTF-8" "" -- "$SKV" set "$BDB" "clé" "värde ✓"
expect "UTF-8 printed as is" "värde ✓" -- "$SKV" get "$BDB" "clé"
expect "set a control character" "" -- "$SKV" set "$BDB" 'ctl' 'line1\x0aline2\x1b'
expect "control characters escaped" 'line1\x0aline2\x1b' -- "$SKV" get "$BDB" ctl
expect "invalid UTF-8 escaped" "" -- "$SKV" set "$BDB" 'bad' 'a\xc3(b\xff'
expect "invalid UTF-8 escaped (get)" 'a\xc3(b\xff' -- "$SKV" get "$BDB" bad
expect "--hex in" "" -- "$SKV" set "$BDB" --hex 6865786b6579 00ff7f
expect "--hex out" "00ff7f" -- "$SKV" get "$BDB" --hex 6865786b6579
expect "hex in, escaped out" '\x00\xff\x7f' -- "$SKV" get "$BDB" hexkey
expect_exit "--hex with an odd digit count" 2 "odd number" -- "$SKV" get "$BDB" --hex abc
printf 'from\nstdin\x00!' | "$SKV" set "$BDB" stdin - && ok || fail "set from stdin"
[[ "$("$SKV" get "$BDB" stdin --raw | od -An -tx1 | tr -d ' \n')" == "66726f6d0a737464696e0021" ]] \
  && ok || fail "a value from stdin is not stored byte for byte"
# Every line of stdin parses as JSON (and there is one): node, else python3.
json_ok() {
  if command -v node >/dev/null; then
    node -e 'const ls=require("fs").readFileSync(0,"utf8").split("\n").filter(Boolean); if(!ls.length) process.exit(1); for (const l of ls) JSON.parse(l);'
  elif command -v python3 >/dev/null; then
    python3 -c 'import json,sys; ls=[l for l in sys.stdin.read().split("\n") if l]; assert ls; [json.loads(l) for l in ls]'
  else
    echo "the JSON checks need node or python3" >&2
    return 1
  fi
}
for args in "get $BDB clé" "get $BDB bad" "scan $BDB" "scan $BDB --keys-only --reverse" "count $BDB" \
            "stats $BDB" "inspect $BDB" "verify $BDB" "history $VDB doc --tombstones" "get-at $VDB doc 250"; do
  # shellcheck disable=SC2086
  out=$("$SKV" $args --json 2>"$WORK/stderr") && json_ok <<<"$out" && ok \
    || fail "--json of '$args' is not JSON lines: [$out] $(cat "$WORK/stderr")"
done
expect "--json keeps UTF-8" '{"key":"clé","value":"värde ✓"}' -- "$SKV" get "$BDB" clé --json
expect "--json gives bytes outside UTF-8 as hex" '{"key":"bad","value_hex":"61c32862ff"}' \
  -- "$SKV" get "$BDB" bad --json
expect "--json count" '{"count":5}' -- "$SKV" count "$BDB" --json

# verify (alias scrub): exit 0 on a clean database, 3 naming the file on damage, and it reads
# without writing.
expect "compact before verify" "compacted $BDB" -- "$SKV" compact "$BDB"
before=$(snapshot "$BDB")
out=$("$SKV" verify "$BDB" 2>&1) && grep -q "no damage" <<<"$out" && ok || fail "verify: $out"
out=$("$SKV" scrub "$BDB" 2>&1) && grep -q "^ok *table" <<<"$out" && ok || fail "scrub: $out"
[[ "$(snapshot "$BDB")" == "$before" ]] && ok || fail "verify changed the database"
sst=$(ls "$BDB"/*.sst | head -n 1)
size=$(stat -c %s "$sst")
printf '\x5a' | dd of="$sst" bs=1 seek=$((size / 2)) conv=notrunc status=none
expect_exit "verify finds a changed byte" 3 "1 damaged" -- "$SKV" verify "$BDB"
out=$("$SKV" verify "$BDB" 2>/dev/null || true)
grep -q "^DAMAGED  table *$(basename "$sst") *corruption: .*$(basename "$sst")" <<<"$out" && ok \
  || fail "verify does not name $(basename "$sst"): $out"
expect_exit "verify of a missing database" 1 "not_found\|no such" -- "$SKV" verify "$WORK/absent"

# dump and load: a text dump and a hex dump of the same database load into copies that dump the
# same; a bad header or a bad first batch creates nothing; a bad later line keeps the batches
# before it.
"$SKV" dump "$DB" >"$WORK/dump.txt" && ok || fail "dump"
[[ "$(head -n 1 "$WORK/dump.txt")" == "skv-dump 1 text" ]] && ok || fail "dump header"
[[ $(($(wc -l <"$WORK/dump.txt") - 1)) -eq $("$SKV" count "$DB") ]] && ok || fail "dump line count"
"$SKV" dump "$DB" --hex >"$WORK/dump.hex" && ok || fail "dump --hex"
"$SKV" load "$WORK/loaded" "$WORK/dump.txt" 2>/dev/null && ok || fail "load a text dump"
"$SKV" load "$WORK/loaded-hex" --batch 2 <"$WORK/dump.hex" 2>/dev/null && ok || fail "load a hex dump from stdin"
for copy in loaded loaded-hex; do
  [[ "$("$SKV" dump "$WORK/$copy")" == "$(cat "$WORK/dump.txt")" ]] && ok || fail "$copy dumps differently"
done
expect_exit "load with a bad header" 2 "line 1 is not" \
  -- bash -c "printf 'k\tv\n' | '$SKV' load '$WORK/never-loaded'"
expect_exit "load with a bad first line" 2 "line 2: not 'key<TAB>value'" \
  -- bash -c "printf 'skv-dump 1 text\nno tab\n' | '$SKV' load '$WORK/never-loaded'"
[[ ! -e "$WORK/never-loaded" ]] && ok || fail "a refused load created the database"
expect_exit "a bad line after a batch" 2 "line 4: bad escape" \
  -- bash -c "printf 'skv-dump 1 text\na\t1\nb\t2\nc\t\\\\q\n' | '$SKV' load '$WORK/partial' --batch 2"
expect "the batch before the bad line is there" "2" -- "$SKV" count "$WORK/partial"
expect_exit "load of a missing file" 1 "cannot be opened" -- "$SKV" load "$WORK/x" "$WORK/no-such-dump"
expect_exit "--batch 0" 2 "--batch needs a number" -- "$SKV" load "$WORK/x" "$WORK/dump.txt" --batch 0
[[ ! -e "$WORK/x" ]] && ok || fail "a refused load created the database"

# inspect (alias stats) reads what the files hold: entry counts, sizes, versioning, encryption.
out=$("$SKV" inspect "$DB") && grep -q "^format_version *2$" <<<"$out" \
  && grep -q "^encryption *off$" <<<"$out" && grep -q "^manifest *MANIFEST-" <<<"$out" && ok \
  || fail "inspect: $out"
entries=$("$SKV" inspect "$DB" --json | grep -o '"table_entries":[0-9]*,"memtable_entries":[0-9]*' \
  | tr -dc '0-9,' | tr ',' '+' | xargs -I{} bash -c 'echo $(({}))')
[[ $entries -ge $("$SKV" count "$DB") ]] && ok || fail "inspect counts $entries entries, fewer than the keys"
out=$("$SKV" inspect "$EDB" "${K[@]}") && grep -q "^encryption *xchacha20-poly1305, key id 1$" <<<"$out" \
  && ok || fail "inspect of an encrypted database: $out"

# sst, wal and manifest decode the files with the engine's readers, read-only.
FDB="$WORK/files"
for i in 1 2 3; do expect "files set $i" "" -- "$SKV" set "$FDB" "f$i" "value-$i"; done
expect "files flush" "flushed $FDB" -- "$SKV" flush "$FDB"
expect "files del" "" -- "$SKV" del "$FDB" f2
before=$(snapshot "$FDB")
out=$("$SKV" manifest "$FDB") && grep -q "^manifest *MANIFEST-" <<<"$out" && grep -q "^L0: " <<<"$out" \
  && ok || fail "manifest: $out"
sst=$(grep -o "[0-9]*\.sst" <<<"$out" | head -n 1)
out=$("$SKV" sst "$FDB" "$sst" --dump-keys --verify) && grep -q "^entries" <<<"$out" \
  && grep -q "^verified *every block" <<<"$out" && grep -q "value-" <<<"$out" && ok \
  || fail "sst $sst: $out"
out=$("$SKV" wal "$FDB" --dump) && grep -q "del f2" <<<"$out" && ok || fail "wal --dump: $out"
# --json of the three: the same facts, checked against the text output and what was written.
if [[ $HAVE_NODE == 1 ]]; then
  jm=$("$SKV" manifest "$FDB" --json --dump) && ok || fail "manifest --json: $jm"
  [[ "$(js 'o.levels.flatMap(l => l.files.map(f => f.name)).sort().join(" ")' <<<"$jm")" == \
     "$("$SKV" manifest "$FDB" | grep -o "[0-9]*\.sst" | sort | paste -sd' ')" ]] && ok \
    || fail "manifest --json tables: $jm"
  [[ "$(js 'o.manifest.startsWith("MANIFEST-") && o.edits === o.dump.length && o.edits > 0' <<<"$jm")" == "true" ]] \
    && ok || fail "manifest --json edits: $jm"
  js_sst=$("$SKV" sst "$FDB" "$sst" --json --dump-keys --verify) && ok || fail "sst --json: $js_sst"
  [[ "$(js 'o.verified && o.dump.length === o.entries && o.file' <<<"$js_sst")" == "$sst" ]] && ok \
    || fail "sst --json counts: $js_sst"
  [[ "$(js 'o.dump.length > 0 && o.dump.every(e => /^f[123]$/.test(e.key) && e.value === "value-" + e.key.slice(1))' <<<"$js_sst")" == "true" ]] \
    && ok || fail "sst --json entries: $js_sst"
  [[ "$(js 'o.dump[0].key === o.smallest.key && o.dump[o.dump.length - 1].key === o.largest.key && o.smallest.sequence <= o.largest.sequence' <<<"$js_sst")" == "true" ]] \
    && ok || fail "sst --json key range: $js_sst"
  jw=$("$SKV" wal "$FDB" --json --dump) && ok || fail "wal --json: $jw"
  [[ "$(js 'o.segments.flatMap(s => s.dump).filter(e => e.kind === "del").map(e => e.key).join(" ")' <<<"$jw")" == "f2" ]] \
    && ok || fail "wal --json: $jw"
  [[ "$(js 'o.segments.every(s => s.entries === s.dump.length && !s.torn_tail && s.hole === false)' <<<"$jw")" == "true" ]] \
    && ok || fail "wal --json counts: $jw"
  [[ "$("$SKV" wal "$FDB" --json --dump --hex | js 'o.segments.flatMap(s => s.dump).map(e => e.key_hex).join(" ")')" == "6632" ]] \
    && ok || fail "wal --json --hex"
fi
[[ "$(snapshot "$FDB")" == "$before" ]] && ok || fail "sst, wal or manifest changed the database"
expect_exit "sst of a name that is not a table" 2 "is not a table" -- "$SKV" sst "$FDB" CURRENT
expect_exit "sst of a missing table" 1 "not_found\|no such" -- "$SKV" sst "$FDB" 999999.sst
out=$("$SKV" manifest "$EDB" "${K[@]}") && grep -q "^L" <<<"$out" && ok || fail "encrypted manifest: $out"
expect_exit "an encrypted manifest needs its key" 3 "not_configured" -- "$SKV" manifest "$EDB"

# migrate: an IndexedDB dump (INDXDB01) into a new database, a summary, JSON; refusals leave
# nothing behind. (The RocksDB and SurrealKV readers have their own tests.)
MIG="$WORK/migrate"
mkdir -p "$MIG"
# 3 records, unsorted: "b"="two", "a"="one", "\x00k"="\xff"
printf 'INDXDB01\0\0\0\3\0\0\0\1b\0\0\0\3two\0\0\0\1a\0\0\0\3one\0\0\0\2\0k\0\0\0\1\377' >"$MIG/dump.bin"
cp "$MIG/dump.bin" "$MIG/dump.orig"
out=$("$SKV" migrate "$MIG/dump.bin" "$MIG/db") && grep -q "^migrated .*(indexeddb-dump)" <<<"$out" \
  && grep -q "^keys: 3$" <<<"$out" && grep -q "^skipped: nothing" <<<"$out" && ok || fail "migrate: $out"
expect "migrated keys and values" $'\\x00k\t\\xff\na\tone\nb\ttwo' -- "$SKV" scan "$MIG/db"
cmp -s "$MIG/dump.bin" "$MIG/dump.orig" && ok || fail "migrate changed its source"
out=$("$SKV" migrate "$MIG/dump.bin" "$MIG/db2" --json) && json_ok <<<"$out" \
  && grep -q '"kind":"indexeddb-dump"' <<<"$out" && grep -q '"keys":3,' <<<"$out" && ok \
  || fail "migrate --json: $out"
expect_exit "migrate into an existing path" 2 "destination exists" \
  -- "$SKV" migrate "$MIG/dump.bin" "$MIG/db"
printf 'INDXDB01\0\0\0\2\0\0\0\1a\0\0\0\1x' >"$MIG/short.bin"
expect_exit "migrate a truncated dump" 3 "more than its 22 bytes" \
  -- "$SKV" migrate "$MIG/short.bin" "$MIG/db3"
[[ ! -e "$MIG/db3" && ! -e "$MIG/db3.migrating" ]] && ok || fail "a failed migrate left files"
expect_exit "migrate column families of a dump" 2 "has none" \
  -- "$SKV" migrate "$MIG/dump.bin" "$MIG/db4" --column-family users
expect_exit "migrate --source of no kind" 2 "--source takes" \
  -- "$SKV" migrate "$MIG/dump.bin" "$MIG/db4" --source leveldb
expect_exit "migrate a missing source" 1 "no such source" -- "$SKV" migrate "$MIG/none" "$MIG/db4"
expect_exit "migrate an skv database" 2 "already an skv database" \
  -- "$SKV" migrate "$MIG/db" "$MIG/db4"
expect_exit "migrate --retention that is no number" 2 "--retention" \
  -- "$SKV" migrate "$MIG/dump.bin" "$MIG/db4" --retention soon
out=$("$SKV" migrate "$MIG/dump.bin" "$MIG/edb" "${K[@]}") && ok || fail "migrate sealed: $out"
expect "a sealed migrated database reads with its key" "one" -- "$SKV" get "$MIG/edb" a "${K[@]}"
expect_exit "a sealed migrated database needs its key" 3 "not_configured" \
  -- "$SKV" get "$MIG/edb" a
[[ ! -e "$MIG/db4" ]] && ok || fail "a refused migrate created its destination"

# The demo runs, twice on the same directory.
for round in 1 2; do
  out=$("$SKV" demo "$WORK/demo" 2>&1) && ok || fail "demo round $round: $out"
  grep -q "second -> conflict" <<<"$out" && ok || fail "demo round $round shows no conflict: $out"
done
expect "demo data readable" '{"handle":"heron","city":"Bergen"}' -- "$SKV" get "$WORK/demo" user:002
out=$("$SKV" demo "$WORK/edemo" "${K[@]}" 2>&1) && ok || fail "encrypted demo: $out"
expect "encrypted demo data readable" '{"handle":"heron","city":"Bergen"}' \
  -- "$SKV" get "$WORK/edemo" user:002 "${K[@]}"
expect_exit "encrypted demo data needs its key" 3 "encryption/not_configured" \
  -- "$SKV" get "$WORK/edemo" user:002

echo "skv cli: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
