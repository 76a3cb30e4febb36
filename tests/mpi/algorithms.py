"""The operations and their algorithms as the build's collrun lists them
(collrun --list-algorithms --json, collrun(1)), for the drivers that run
every algorithm: an algorithm added to the library is run by them without
a list of their own to keep in step."""
import json
import os
import subprocess


def operations(build):
    """[{"op", "default_tree", "algorithms": [{"name", flags...}]}], in
    the library's order."""
    p = subprocess.run([os.path.join(build, "collrun"), "--list-algorithms",
                        "--json"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)["operations"]


def mpi_name(op):
    """The name libcollc-mpi's settings give an operation
    (COLLC_MPI_<NAME>_ALGORITHM): its MPI call's."""
    return "REDUCE_SCATTER_BLOCK" if op == "reduce-scatter" else \
        op.upper().replace("-", "_")
