#!/bin/sh
# tests/fault/limits.sh BUILD - real memory limits (ulimit -v), not the
# test hook: whatever the limit, a run ends with exit 0, or with exit 1 and
# one "out of memory" line, or with exit 2 and its input error; never a
# signal, never a syntax error made up by running out of memory.  BUILD
# must be a build without sanitizers (AddressSanitizer reserves terabytes
# of address space and cannot start under ulimit -v).
# Prints "limits: N passed, N failed".
B=$(cd "${1:?usage: limits.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
EX=$top/examples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# limited KIB NAME WANT CMD...: runs CMD under ulimit -v KIB; WANT is the
# exit status of an unlimited run, which a limited run may give too.
limited() {
	kib=$1 name=$2 want=$3
	shift 3
	(ulimit -v "$kib" && exec "$@") >"$work/out" 2>"$work/err"
	st=$?
	lines=$(wc -l <"$work/err")
	if [ $st -gt 2 ]; then
		bad "$name at $kib KiB: exit status $st (a signal?):"
		head -3 "$work/err"
	elif [ $st = 1 ] && ! { [ "$lines" = 1 ] && grep -q 'out of memory' "$work/err"; }; then
		bad "$name at $kib KiB: exit 1 without one \"out of memory\" line:"
		head -3 "$work/err"
	elif [ $st != 1 ] && [ $st != "$want" ]; then
		bad "$name at $kib KiB: exit status $st, want $want or 1:"
		head -3 "$work/err"
	else
		ok
	fi
}

# A machine whose name is a 20 MB string: under 64 MB this crashed
# (jansson dropped the closing quote and copied past its buffer), under
# 72 MB it was reported as "invalid token".
python3 -c '
import json, sys
json.dump({"name": "x" * 20000000, "nodes": 2, "tasks_per_node": 2,
           "network": {"type": "kary", "fanout": 2}}, open(sys.argv[1], "w"))' \
    "$work/bigname.json"
for kib in 32000 48000 56000 64000 72000 80000 96000 128000 192000; do
	limited $kib "collc compile, 20 MB name" 0 \
	    "$B/collc" compile "$work/bigname.json" -t chain -o "$work/o.json"
	limited $kib "collc group, 20 MB name" 0 \
	    "$B/collc" group "$work/bigname.json" all
done
# The same string where it is an error: the error, or out of memory.
python3 -c '
import json, sys
json.dump({"nodes": 2, "tasks_per_node": 2, "x": "y" * 20000000},
          open(sys.argv[1], "w"))' "$work/badkey.json"
for kib in 48000 64000 72000 128000; do
	limited $kib "collc compile, 20 MB unknown key" 2 \
	    "$B/collc" compile "$work/badkey.json"
done
# A compile output read by collrun and collc routes, at limits around
# what it needs.
"$B/collc" compile "$EX/endpoints.json" --routes full -o "$work/r.json" || exit 1
for kib in 16000 24000 32000 48000 64000; do
	limited $kib "collrun bcast, full table" 0 \
	    "$B/collrun" bcast "$work/r.json" --threads 1
	limited $kib "collc routes, full table" 0 \
	    "$B/collc" routes "$work/r.json" --member 5
done

# A wrong file that claims a huge machine gets its real error whatever the
# limit: everything cheap is checked before anything per node (once,
# under any limit below about 8.6 GB, "nodes": 2147483647 turned every
# later error into "out of memory").
printf '{"nodes": 2147483647, "tasks_per_node": 1, "network": {"type": "kary", "fanout": 2}, "groups": {"g": "cols 0::0"}}' \
    >"$work/hugebad.json"
printf '{"nodes": 500000000, "tasks_per_node": 1}' >"$work/nonet.json"
for kib in 16000 64000 500000; do
	(ulimit -v $kib && exec "$B/collc" compile "$work/hugebad.json") \
	    >/dev/null 2>"$work/err"
	st=$?
	if [ $st = 2 ] && grep -q 'stride is 0' "$work/err"; then ok; else
		bad "huge machine, bad spec, at $kib KiB: exit $st: $(head -1 "$work/err")"
	fi
	(ulimit -v $kib && exec "$B/collc" compile "$work/nonet.json") \
	    >/dev/null 2>"$work/err"
	st=$?
	if [ $st = 2 ] && grep -q 'missing "network"' "$work/err"; then ok; else
		bad "500M nodes, no network, at $kib KiB: exit $st: $(head -1 "$work/err")"
	fi
done

# The memory refusal counts the plan and the run, not only the buffers,
# against the tightest limit: 24 MB of buffers and 1.6 GB of plan (bcast
# of 1 MiB in segments of one byte over 22 members) under ulimit -v 1 GB
# and ulimit -d 1 GB is refused up front, naming the limit (it used to
# build the plan until memory ran out).
for lim in v d; do
	(ulimit -$lim 1000000 && exec "$B/collrun" bcast "$EX/uneven.json" \
	    --bytes 1M --segment 1) >/dev/null 2>"$work/err"
	st=$?
	if [ $st = 2 ] && grep -q '^collrun: the run needs [0-9]* bytes (.*plan [0-9]*.*ulimit -'$lim')$' "$work/err"; then
		ok
	else
		bad "bcast 1 MiB in 1-byte segments under ulimit -$lim 1 GB: exit $st: $(head -1 "$work/err")"
	fi
done
# 2^31 - 1 iterations ended by the timeout: the times of the iterations
# run are kept, not 16 GiB reserved for all of them.
(ulimit -v 300000 && exec "$B/collrun" bcast "$EX/tiny.json" \
    --iterations 2147483647 --timeout 0.5) >"$work/out" 2>"$work/err"
st=$?
if [ $st = 1 ] && grep -q 'timeout: the run did not finish within 0.5 s' "$work/out" &&
    [ ! -s "$work/err" ]; then ok; else
	bad "2^31-1 iterations under ulimit -v 300 MB: exit $st: $(head -1 "$work/err")"
fi

echo "limits: $pass passed, $fail failed"
[ $fail = 0 ]
