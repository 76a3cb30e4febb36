#!/bin/sh
# tests/cli/run.sh BUILD - runs every case under tests/cli/cases.
#
# A case is a directory:
#   cmd      shell commands run in a fresh scratch directory (its cwd), with
#            $COLLC and $COLLRUN (the programs), $EX (examples/), $CASE (the
#            case directory)
#   status   the expected exit status of cmd (default 0)
#   stdout   expected standard output, exactly (optional)
#   stderr   expected standard error, exactly (optional)
#   after    optional shell commands run afterwards in the same directory;
#            they must exit 0 (e.g. checking that a file was left untouched)
# Every case must name at least one of stdout, stderr or after, so that it
# asserts what happened and not only that something ran.
# UPDATE=1 rewrites stdout/stderr/status from the actual run (then review
# the diff before committing it).  ONLY=GLOB runs only the matching cases;
# SHARD=K/N only the cases whose place in the list is K modulo N (0 <= K <
# N), so that N runs can share them.
B=$(cd "${1:?usage: run.sh BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
COLLC="$B/collc"
COLLRUN="$B/collrun"
EX="$top/examples"
export COLLC COLLRUN EX
pass=0 fail=0
shard_k=${SHARD%/*} shard_n=${SHARD#*/} index=0
case ${SHARD:-0/1} in
*[!0-9/]* | /* | */ | */*/*) echo "run.sh: SHARD must be K/N"; exit 2 ;;
esac
[ -n "$SHARD" ] || shard_k=0 shard_n=1
[ "$shard_n" -gt 0 ] && [ "$shard_k" -lt "$shard_n" ] || {
	echo "run.sh: SHARD=$SHARD: K must be below N"
	exit 2
}
for case in "$here"/cases/*/; do
	case=${case%/}
	name=$(basename "$case")
	index=$((index + 1))
	[ $(((index - 1) % shard_n)) = "$shard_k" ] || continue
	case $name in ${ONLY:-*}) ;; *) continue ;; esac
	scratch=$(mktemp -d)
	want_status=0
	[ -f "$case/status" ] && want_status=$(cat "$case/status")
	if [ -z "$UPDATE" ] && [ ! -f "$case/stdout" ] && [ ! -f "$case/stderr" ] && [ ! -f "$case/after" ]; then
		echo "FAIL $name: case asserts nothing (needs stdout, stderr or after)"
		fail=$((fail + 1)); rm -rf "$scratch"; continue
	fi
	(cd "$scratch" && CASE="$case" sh "$case/cmd" >"$scratch/.out" 2>"$scratch/.err")
	got_status=$?
	ok=1
	if [ -n "$UPDATE" ]; then
		echo "$got_status" >"$case/status"
		[ -s "$scratch/.out" ] || [ -f "$case/stdout" ] && cp "$scratch/.out" "$case/stdout"
		[ -s "$scratch/.err" ] || [ -f "$case/stderr" ] && cp "$scratch/.err" "$case/stderr"
	fi
	if [ "$got_status" != "$want_status" ]; then
		echo "FAIL $name: exit status $got_status, want $want_status"; ok=0
	fi
	for s in stdout stderr; do
		f=$scratch/.out; [ $s = stderr ] && f=$scratch/.err
		if [ -f "$case/$s" ] && ! cmp -s "$case/$s" "$f"; then
			echo "FAIL $name: $s differs:"; diff "$case/$s" "$f" | head -20; ok=0
		fi
	done
	if [ -f "$case/after" ] && ! (cd "$scratch" && CASE="$case" sh "$case/after"); then
		echo "FAIL $name: 'after' check failed"; ok=0
	fi
	if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
	rm -rf "$scratch"
done
echo "cli: $pass passed, $fail failed"
[ $fail = 0 ]
