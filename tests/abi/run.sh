#!/bin/sh
# tests/abi/run.sh BUILD - the shared library's interface is topo.h's, no
# more and no less.  With NAMES the public functions of topo.h as
# libtopo/exports.awk lists them (the declarations marked TOPO_EXTERN):
#   header   NAMES are exactly the functions the compiler sees declared in
#            topo.h (gcc -aux-info): none was left without TOPO_EXTERN
#   exports  BUILD/libtopo.so exports exactly NAMES (nm -D --defined-only),
#            each a function (T) at a version of libtopo/libtopo.map, and
#            no topo__* name
#   map      libtopo/libtopo.map lists exactly NAMES
#   link     a program linked with -ltopo can call topo_strerror but not an
#            internal function (topo__err): hidden to the linker, not only
#            to nm
#   layers   libtopo/sys/ and alloc.c call nothing above them (tune.c aside)
#   man      each of NAMES is in the SYNOPSIS of one libtopo(3) family page
#            (man/libtopo-*.3), in topo.h's order within the page, and
#            described after it (a .Fn NAME past the SYNOPSIS); the overview
#            libtopo(3) links each of NAMES and each family page (.Xr)
# Prints what differs, then "abi: N passed, N failed".
B=$(cd "${1:?usage: run.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# check WHAT FILE1 FILE2: the two sorted name lists are equal.
same() {
	if cmp -s "$2" "$3"; then
		pass=$((pass + 1))
	else
		echo "FAIL $1 (< topo.h's TOPO_EXTERN functions, > the other):"
		diff "$2" "$3" | grep '^[<>]'
		fail=$((fail + 1))
	fi
}
ok() {
	what=$1
	shift
	if "$@"; then pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); fi
}

awk -f "$top/libtopo/exports.awk" "$top/libtopo/topo.h" >"$work/names.order"
sort "$work/names.order" >"$work/names"
ok "exports.awk finds no public name in topo.h" test -s "$work/names"
ok "a public name does not start with topo_ or starts with topo__" \
	test -z "$(grep -v '^topo_[a-z0-9]' "$work/names")"
ok "a name is declared TOPO_EXTERN twice" \
	test -z "$(uniq -d "$work/names")"

# header: every function the compiler sees in topo.h is marked.
if gcc -aux-info "$work/aux" -fsyntax-only -x c "$top/libtopo/topo.h" 2>"$work/aux.err"; then
	grep "/topo\.h:" "$work/aux" | sed -e 's|^/\*[^*]*\*/ *||' -e 's/ (.*//' \
		-e 's/.*[^A-Za-z0-9_]//' | sort >"$work/declared"
	same "header: functions declared in topo.h without TOPO_EXTERN" \
		"$work/names" "$work/declared"
else
	echo "FAIL header: gcc -aux-info: $(cat "$work/aux.err")"
	fail=$((fail + 1))
fi

# exports: what the shared library gives a program to link with.
so=$B/libtopo.so
ok "exports: $so missing" test -f "$so"
# The version node names (TOPO_0) are absolute symbols (A): not functions.
# Newer nm prints versions after the name (topo_strerror@@TOPO_0).
nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
	sort >"$work/exported"
same "exports: libtopo.so's dynamic symbols" "$work/names" "$work/exported"
ok "exports: an internal topo__ name is exported" \
	test -z "$(grep '^topo__' "$work/exported")"
nm -D --defined-only "$so" | awk '$2 != "A" && $2 != "T" { print }' >"$work/notfunc"
ok "exports: not a function: $(cat "$work/notfunc")" test ! -s "$work/notfunc"
# objdump -T: "... DF .text ... TOPO_0 topo_strerror"
objdump -T "$so" | awk '/ DF \.text/ && $NF ~ /^topo_/ { print $(NF - 1), $NF }' >"$work/versions"
awk '{ print $2 }' "$work/versions" | sort >"$work/versioned"
same "exports: functions with a version" "$work/names" "$work/versioned"
ok "exports: a version not of the map ($(awk '$1 !~ /^TOPO_/' "$work/versions" | head -3))" \
	test -z "$(awk '$1 !~ /^TOPO_[0-9.]+$/' "$work/versions")"

# map: the version script names the same functions.
sed -e 's|/\*.*\*/||' "$top/libtopo/libtopo.map" | awk '
	/\/\*/ { incomment = 1 }
	incomment { if (/\*\//) incomment = 0; next }
	/^[ \t]*topo_[A-Za-z0-9_]*;/ { gsub(/[ \t;]/, ""); print }' | sort >"$work/mapped"
same "map: libtopo/libtopo.map" "$work/names" "$work/mapped"

# link: the interface links, an internal function does not.  Linked only,
# not run (a sanitized library would need its runtime);
# --allow-shlib-undefined for the same reason.
cat >"$work/public.c" <<'C'
#include <topo.h>
int main(void) { return topo_strerror(0) == 0; }
C
cat >"$work/internal.c" <<'C'
#include <topo.h>
int topo__err(topo_error *err, int code, const char *source,
	      const char *pointer, const char *fmt, ...);
int main(void) { return topo__err(0, -1, 0, 0, "x") == 0; }
C
for prog in public internal; do
	cc -o "$work/$prog" "$work/$prog.c" -I"$top/libtopo" -L"$B" -ltopo \
		-Wl,--allow-shlib-undefined >"$work/$prog.log" 2>&1
	echo $? >"$work/$prog.status"
done
ok "link: a program calling topo_strerror does not link: $(cat "$work/public.log")" \
	test "$(cat "$work/public.status")" = 0
ok "link: a program calling topo__err links against libtopo.so" \
	test "$(cat "$work/internal.status")" != 0
ok "link: the program calling topo__err fails for another reason: $(cat "$work/internal.log")" \
	grep -q "undefined reference to .topo__err" "$work/internal.log"

# layers: the lowest rooms depend on nothing above them.  The system room
# (libtopo/sys/) calls no libtopo function outside itself, and the
# allocator (alloc.c) none outside itself, sys/ and the tunable thresholds
# (tune.c, data only): both are what every other room stands on.
nm --defined-only "$B"/libtopo/sys/*.o | awk 'NF == 3 { print $3 }' | sort -u >"$work/sys.def"
nm -u "$B"/libtopo/sys/*.o | awk '$2 ~ /^topo_/ { print $2 }' | sort -u >"$work/sys.used"
ok "layers: sys/ objects missing from $B/libtopo/sys" test -s "$work/sys.def"
ok "layers: libtopo/sys calls up: $(comm -23 "$work/sys.used" "$work/sys.def" | tr '\n' ' ')" \
	test -z "$(comm -23 "$work/sys.used" "$work/sys.def")"
nm --defined-only "$B"/libtopo/alloc.o "$B"/libtopo/tune.o | awk 'NF == 3 { print $3 }' | sort -u >"$work/alloc.def"
sort -u "$work/sys.def" "$work/alloc.def" >"$work/low.def"
nm -u "$B"/libtopo/alloc.o | awk '$2 ~ /^topo_/ { print $2 }' | sort -u >"$work/alloc.used"
ok "layers: alloc.c calls up: $(comm -23 "$work/alloc.used" "$work/low.def" | tr '\n' ' ')" \
	test -z "$(comm -23 "$work/alloc.used" "$work/low.def")"

# man: libtopo(3) is an overview; each function is in the SYNOPSIS of one
# family page (man/libtopo-*.3, listed by man/links.awk), in topo.h's order
# within the page, and described there; the overview links every function
# and every family page.
pages=$(ls "$top"/man/libtopo-*.3 2>/dev/null)
ok "man: no family page man/libtopo-*.3" test -n "$pages"
awk -f "$top/man/links.awk" $pages >"$work/links"
awk '{ print $1 }' "$work/links" | sort >"$work/synopsis"
same "man: the family pages' SYNOPSIS (a name twice: in two pages)" "$work/names" "$work/synopsis"
for page in $pages; do
	name=$(basename "$page")
	awk -v p="$name" '$2 == p { print $1 }' "$work/links" >"$work/page.order"
	grep -Fx -f "$work/page.order" "$work/names.order" >"$work/page.want"
	ok "man: $name SYNOPSIS is not in topo.h's order" \
		cmp -s "$work/page.order" "$work/page.want"
	awk '/^\.Sh /{ sec = $2 } sec != "SYNOPSIS" && sec != "NAME" {
		for (i = 1; i < NF; i++) if ($i == "Fn" || $i == ".Fn") print $(i + 1) }' "$page" |
		sed 's/[^A-Za-z0-9_].*//' | sort -u >"$work/described"
	sort "$work/page.order" | comm -23 - "$work/described" >"$work/undescribed"
	ok "man: $name does not describe (no .Fn past the SYNOPSIS): $(cat "$work/undescribed")" \
		test ! -s "$work/undescribed"
	ok "man: libtopo(3) does not link $name" \
		grep -q "^\.Xr $(basename "$name" .3) 3" "$top/man/libtopo.3"
done
awk '$1 == ".Xr" && $3 ~ /^3/ { print $2 }' "$top/man/libtopo.3" | sort -u >"$work/linked"
comm -23 "$work/names" "$work/linked" >"$work/unlinked"
ok "man: libtopo(3) has no .Xr to: $(cat "$work/unlinked")" test ! -s "$work/unlinked"

echo "abi: $pass passed, $fail failed"
[ $fail = 0 ]
