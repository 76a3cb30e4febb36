#!/bin/sh
# tests/install/run.sh - `make install` and `make uninstall` into a DESTDIR:
# every file lands where PREFIX says (also a man page link for each public
# function of topo.h to the libtopo(3) family page that documents it, which
# mandoc renders, and the JSON Schemas), a program builds against the
# installed header and library through pkg-config and runs, and uninstall
# removes it all.
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
pass=0 fail=0
ok() { if "$@"; then pass=$((pass + 1)); else echo "FAIL: $*"; fail=$((fail + 1)); fi; }

# Plain (unsanitized) objects in a scratch build directory, also under
# `make SANITIZE=... check`: the consumer below links without sanitizer
# runtimes, and the repository's build directory is left alone.
make -s -C "$top" install SANITIZE= B="$dest/build" DESTDIR="$dest" PREFIX=/opt/collc >"$dest/log" 2>&1
ok test $? = 0
for f in bin/collc bin/collrun lib/libtopo.a lib/libtopo.so lib/libtopo.so.0 include/topo.h \
	lib/pkgconfig/libtopo.pc share/man/man1/collc.1 share/man/man5/collc.5 \
	share/man/man7/collc.7 share/man/man3/libtopo.3 share/man/man1/collrun.1; do
	ok test -e "$dest/opt/collc/$f"
done
ok grep -q '^prefix=/opt/collc$' "$dest/opt/collc/lib/pkgconfig/libtopo.pc"

# `man FUNCTION` for every public function: a link to the family page that
# documents it (man/links.awk), which renders with the function in its
# SYNOPSIS (mandoc's bold is overstruck: the sed removes it).  With man-db
# present, `man -w` finds that page.
man=$dest/opt/collc/share/man
funcs=$(awk -f "$top/libtopo/exports.awk" "$top/libtopo/topo.h")
ok test "$(echo "$funcs" | wc -w)" -gt 80
awk -f "$top/man/links.awk" "$top"/man/libtopo-*.3 >"$dest/links"
for f in $funcs; do
	family=$(awk -v f="$f" '$1 == f { print $2 }' "$dest/links")
	ok test -n "$family"
	ok test -f "$man/man3/$family"
	page=$man/man3/$f.3
	if [ ! -e "$page" ]; then
		echo "FAIL: no man page $page"
		fail=$((fail + 1))
		continue
	fi
	mandoc -T ascii "$page" 2>&1 | sed 's/.\x08//g' >"$dest/page"
	ok grep -q "^     $f(" "$dest/page"
	if command -v man >/dev/null 2>&1; then
		ok test "$(MANPATH=$man man -w "$f" 2>&1)" = "$man/man3/$family"
	fi
done

# The JSON Schemas of collc(5), as in the source tree.
for s in "$top"/schemas/*.schema.json; do
	ok cmp -s "$s" "$dest/opt/collc/share/collc/schemas/$(basename "$s")"
done
ok test -f "$dest/opt/collc/share/collc/schemas/machine.schema.json"
ok test -f "$dest/opt/collc/share/collc/schemas/routes.schema.json"

# A consumer program, built the way libtopo(3) says.
cat >"$dest/use.c" <<'C'
#include <topo.h>
#include <stdio.h>
int main(void)
{
	static const char js[] = "{\"nodes\": 2, \"tasks_per_node\": [1, 2],"
		"\"network\": {\"type\": \"kary\", \"fanout\": 1}}";
	topo_machine *m; topo_group *g; topo_tree *t; topo_error err;
	topo_error_clear(&err);
	if (topo_machine_load_string(&m, js, sizeof(js) - 1, "use", &err) ||
	    topo_group_new(&g, m, NULL, "all", &err) ||
	    topo_tree_new(&t, g, "physical", &err))
		return 1;
	/* The shared library's own version, and the header's. */
	printf("%d %d %s %d %s\n", topo_group_size(g), topo_tree_parent(t)[2],
	       topo_version_string(), topo_version_cmp(TOPO_VERSION_MAJOR,
	       TOPO_VERSION_MINOR, TOPO_VERSION_PATCH), TOPO_VERSION_STRING);
	topo_tree_free(t); topo_group_free(g); topo_machine_free(m);
	return 0;
}
C
PKG_CONFIG_PATH="$dest/opt/collc/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" \
	pkg-config --cflags --libs libtopo >"$dest/flags" 2>&1
ok test $? = 0
cc -o "$dest/use" "$dest/use.c" $(cat "$dest/flags") -ljansson -lpthread 2>>"$dest/log"
ok test $? = 0
out=$(LD_LIBRARY_PATH="$dest/opt/collc/lib" "$dest/use")
ver=$(sed -n 's/^#define TOPO_VERSION_STRING "\(.*\)"/\1/p' "$top/libtopo/topo.h")
ok test -n "$ver"
ok test "$out" = "3 1 $ver 0 $ver"
ok test -e "$dest/opt/collc/lib/libtopo.so.$ver"
ok test "$("$dest/opt/collc/bin/collc" --version)" = "collc $ver"
ok test "$("$dest/opt/collc/bin/collrun" --version)" = "collrun $ver"
# collrun-mpi and its man page link, where an MPI compiler builds it
if command -v mpicc >/dev/null 2>&1; then
	ok test -x "$dest/opt/collc/bin/collrun-mpi"
	ok test -L "$man/man1/collrun-mpi.1"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	    "$dest/opt/collc/bin/collrun-mpi" --version >"$dest/v" 2>&1
	ok test "$(cat "$dest/v")" = "collrun-mpi $ver"
	# the PMPI library: the MPI functions it wraps and nothing of
	# libtopo's exported
	ok test -f "$dest/opt/collc/lib/libcollc-mpi.so"
	ok test -f "$man/man7/libcollc-mpi.7"
	# (the persistent forms, X_init, are MPI 4.0's MPI_X_init or Open
	# MPI 4.1's MPIX_X_init, as the MPI library behind mpicc has them)
	nm -D --defined-only "$dest/opt/collc/lib/libcollc-mpi.so" | awk '{print $3}' | sort >"$dest/syms"
	syms=$(grep -v '_init$' "$dest/syms" | tr '\n' ' ')
	ok test "$syms" = "MPI_Allgather MPI_Allreduce MPI_Alltoall MPI_Barrier MPI_Bcast MPI_Finalize MPI_Gather MPI_Iallgather MPI_Iallreduce MPI_Ialltoall MPI_Ibarrier MPI_Ibcast MPI_Igather MPI_Init MPI_Init_thread MPI_Ireduce MPI_Ireduce_scatter_block MPI_Iscatter MPI_Reduce MPI_Reduce_scatter_block MPI_Scatter collc_mpi_counts "
	pers=$(grep '_init$' "$dest/syms" | sed 's/^MPIX*_//' | tr '\n' ' ')
	ok test "$pers" = "Allgather_init Allreduce_init Alltoall_init Barrier_init Bcast_init Gather_init Reduce_init Reduce_scatter_block_init Scatter_init "
	ok test "$(grep '_init$' "$dest/syms" | sed 's/_.*//' | sort -u | wc -l)" = 1
fi

make -s -C "$top" uninstall SANITIZE= B="$dest/build" DESTDIR="$dest" PREFIX=/opt/collc >>"$dest/log" 2>&1
ok test $? = 0
left=$(find "$dest/opt" -type f -o -type l | wc -l)
ok test "$left" = 0
ok test ! -e "$dest/opt/collc/share/collc"
[ $fail = 0 ] || cat "$dest/log"
echo "install: $pass passed, $fail failed"
[ $fail = 0 ]
