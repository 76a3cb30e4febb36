# tests/sim/cases.sh - the operation x algorithm x tree combinations that
# both simulator checks replay (tests/sim/run.sh with SimGrid,
# tests/sim/loggopsim.sh with LogGOPSim), one "OP ALGORITHM TREE" a line.
# Sourced, not run.

cases() {
	for tree in physical hierarchical binomial chain kary:2; do
		echo "bcast flood $tree"
		echo "scatter tree $tree"
		echo "scatter or-combine $tree"
		echo "gather chunked $tree"
		echo "gather tree $tree"
		echo "reduce tree $tree"
	done
	echo "reduce hierarchical hierarchical"
	# the tree algorithms over every tree, the others once
	for tree in physical hierarchical binomial chain kary:2; do
		echo "allreduce tree $tree"
		echo "allgather tree $tree"
		echo "reduce-scatter tree $tree"
		echo "barrier tree $tree"
	done
	echo "allreduce hierarchical hierarchical"
	for oa in allreduce:ring allreduce:recursive-doubling \
		allreduce:rabenseifner allgather:ring \
		allgather:recursive-doubling allgather:bruck \
		reduce-scatter:ring reduce-scatter:recursive-halving \
		reduce-scatter:direct reduce:direct \
		alltoall:pairwise alltoall:bruck alltoall:direct \
		barrier:dissemination; do
		echo "${oa%%:*} ${oa#*:} physical"
	done
}
