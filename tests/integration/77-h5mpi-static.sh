#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 77-h5mpi.sh with HDF5 linked into the MPI program (h5pcc's default): see there.
H5PMPI_LINK=static
. "$(dirname "$0")/77-h5mpi.sh"
