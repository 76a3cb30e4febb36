#!/bin/sh
# examples/demo.sh BUILD - `make demo`: compile every shipped example, show
# what came out, and replay each collective over one.  Outputs go to
# BUILD/demo/.
set -eu
B=${1:?usage: demo.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
collc="$B/collc"
out="$B/demo"
mkdir -p "$out"

echo "== collc compile: every example, default trees (physical, hierarchical, binomial)"
for m in "$here"/*.json; do
	name=$(basename "$m" .json)
	"$collc" compile "$m" -o "$out/$name.routes.json" -v
done

echo
echo "== collc group: stride specs over the endpoint table of examples/endpoints.json"
for spec in "cols 0::2" "rows 0:1 cols 4:7" "cols 31:0:-2 + node 0" "all - row 0"; do
	ids=$("$collc" group "$here/endpoints.json" "$spec" | tr '\n' ' ')
	set -- $ids
	printf '%-24s %3d members: %s\n' "\"$spec\"" $# "$(echo "$ids" | cut -c1-60)..."
done

echo
echo "== collc import hostfile: a job's host file as a machine whose nodes have names"
printf '# Open MPI host file\nnode07 slots=4\nnode08 slots=4\nnode09:2\n' >"$out/job.hosts"
"$collc" import hostfile "$out/job.hosts" -o "$out/job.json"
printf '%-24s members: %s\n' "\"hosts node[08-09]\"" \
	"$("$collc" group "$out/job.json" 'hosts node[08-09]' | tr '\n' ' ')"

echo
echo "== the physical tree of examples/uneven.json, world group (parent of each member)"
python3 - "$out/uneven.routes.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
g = doc["groups"][0]
for t in g["trees"]:
    print(f'{t["name"]:>12}: root {t["root"]}, depth {t["depth"]}, '
          f'edges shm {t["edges"]["shm"]} net {t["edges"]["net"]}')
t = g["trees"][0]
print("  member:", " ".join(f"{m:>2}" for m in g["members"]))
print("  parent:", " ".join(f"{p:>2}" for p in t["parent"]))
print("  edge:  ", " ".join(f"{e[0]:>2}" for e in t["edge"]))
print("  route table:", json.dumps(t["routes"]))
PY
echo "  its first rows, expanded (collc routes):"
"$collc" routes "$out/uneven.routes.json" -t physical --rank 0 --rank 1 | sed 's/^/    /'

echo
if command -v dot >/dev/null 2>&1; then
	"$collc" dot "$out/uneven.routes.json" -t physical -o "$out/uneven-physical.dot"
	dot -Tsvg "$out/uneven-physical.dot" -o "$out/uneven-physical.svg"
	echo "== drew $out/uneven-physical.svg (collc dot | dot -Tsvg)"
else
	"$collc" dot "$out/uneven.routes.json" -t physical -o "$out/uneven-physical.dot"
	echo "== wrote $out/uneven-physical.dot (install graphviz to render it)"
fi

echo
echo "== collrun: replay collectives over examples/uneven.json with real data, every byte checked"
# The compiled routes file from above; each report cut to its main lines
# (collrun exits 1 when a run fails verification, which stops the demo).
replay() {
	echo "\$ collrun $* uneven.routes.json"
	report=$("$B/collrun" "$@" "$out/uneven.routes.json")
	printf '%s\n' "$report" |
	    grep -E '^(algorithm|root|members|messages|seconds|verified):' |
	    sed 's/^/    /'
}
# From endpoint 9, not the physical tree's root (13): one table serves any
# root; 1 MiB goes in 16 segments of 64 KiB.
replay bcast --root 9 --bytes 1M --iterations 10
replay scatter --algorithm or-combine --bytes 4K --iterations 10
replay gather --bytes 256K --iterations 10
replay reduce --type double --op max --bytes 64K --iterations 10

echo
echo "== collrun --predict: the same bcast on the machine examples/uneven.json describes (LogGP)"
"$B/collrun" bcast --root 9 --bytes 1M --predict "$out/uneven.routes.json" |
    grep -E '^(algorithm|messages|costs|predicted|last member|finish|critical path):' |
    sed 's/^/    /'

echo
echo "== collc predict: every tree and algorithm of examples/uneven.json, reduce and bcast"
"$collc" predict "$here/uneven.json" --op reduce,bcast --sizes 8,64K,16M
if command -v gnuplot >/dev/null 2>&1; then
	"$collc" predict "$here/uneven.json" --op reduce,bcast --sizes 8,64K,16M \
	    --plot "$out/uneven-predict.svg" >/dev/null
	echo "== drew $out/uneven-predict.svg (collc predict --plot)"
else
	echo "== (install gnuplot to draw the plot: collc predict --plot FILE.svg)"
fi
