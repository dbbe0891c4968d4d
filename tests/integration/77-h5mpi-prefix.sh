#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 77-h5mpi.sh against the parallel HDF5 installed under IOACCT_HDF5_MPI_PREFIX
# (its h5pcc and libhdf5.so; opt-in, skipped without it: CI has no such
# build), e.g. 1.14.6 built with OpenMPI's mpicc: see there.
H5PMPI_LINK=prefix
. "$(dirname "$0")/77-h5mpi.sh"
