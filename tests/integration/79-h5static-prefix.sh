#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# 79-h5static.sh with the h5cc of the upstream HDF5 installed under
# IOACCT_HDF5_PREFIX (opt-in, skipped without it: CI has no such build), e.g.
# 1.14.6: its libhdf5.a linked into h5prog, the same records, exact, b's
# regular hyperslabs read from 1.14's code (issue 39). See 79-h5static.sh.
H5_PREFIX_TEST=1
. "$(dirname "$0")/79-h5static.sh"
