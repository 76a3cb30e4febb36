#!/bin/sh
# tests/bench/defaults.sh BUILD - the figures behind the default algorithm
# of each operation (collrun(1) "Algorithms"): every algorithm
# replayed here (median of 30 iterations, microseconds) and predicted on
# the described machine with its default costs, over 16 tasks on one node
# and over examples/uneven.json (22 members on 6 nodes), at 8 B and at
# 1 MiB per member (blocks of 64 KiB for reduce-scatter and alltoall).
# Prints a markdown table (tests/bench/results/defaults.md).
B=$(cd "${1:?usage: defaults.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
C=$B/collrun
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '{"name": "n16", "nodes": 1, "tasks_per_node": 16, "network": {"type": "kary", "fanout": 2}}' >"$work/n16.json"
echo "| machine | bytes | op | algorithm | replay us (median) | predicted us |"
echo "|---|---:|---|---|---:|---:|"
for m in "$work/n16.json" "$top/examples/uneven.json"; do
	for b in 8 1M; do
		for oa in allreduce:tree allreduce:ring allreduce:recursive-doubling \
			allreduce:rabenseifner allgather:ring allgather:tree \
			allgather:recursive-doubling allgather:bruck \
			reduce-scatter:ring reduce-scatter:tree \
			reduce-scatter:recursive-halving reduce-scatter:direct \
			reduce:hierarchical reduce:direct \
			alltoall:pairwise \
			alltoall:bruck alltoall:direct barrier:dissemination \
			barrier:tree; do
			op=${oa%%:*} a=${oa#*:} bb=$b
			case $op in reduce-scatter | alltoall) [ "$b" = 1M ] && bb=64K ;; esac
			if [ "$op" = barrier ]; then
				[ "$b" = 1M ] && continue
				set --
			else
				set -- --bytes "$bb"
			fi
			r=$("$C" "$op" --algorithm "$a" "$@" --iterations 30 --json "$m" |
				python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["verified"]; print("%.1f" % (d["seconds"]["median"] * 1e6))') || exit 1
			p=$("$C" "$op" --algorithm "$a" "$@" --predict --json "$m" |
				python3 -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["predicted"]["seconds"] * 1e6))') || exit 1
			echo "| $(basename "$m" .json) | $bb | $op | $a | $r | $p |"
		done
	done
done
