#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 75-hdf5.sh against the upstream HDF5 installed under IOACCT_HDF5_PREFIX
# (its libhdf5.so; opt-in, skipped without it: CI has no such build), e.g.
# 1.14.6, whose API goes through the VOL layer (issue 39): the same records,
# exact. The library, outside the system's directories, is not parsed ahead:
# a first run gets it attached, the second is checked. See 75-hdf5.sh.
H5_PREFIX_TEST=1
. "$(dirname "$0")/75-hdf5.sh"
