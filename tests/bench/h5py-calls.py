# SPDX-License-Identifier: GPL-2.0-or-later
"""The h5py writes of tests/bench/h5-cost (issue 39), for Debian's
python3-h5py (run with /usr/bin/python3): h5-calls.c's run through h5py.

    h5py-calls.py N ELEMS FILE

FILE with one contiguous dataset "d" of ELEMS doubles (its space allocated
at the create), then N writes of the whole dataset (d[...] = a: one H5Dwrite
each, with h5py's own selection calls around it), timed, then one read that
checks the last write; prints the mean ns of one write."""
import sys
import time

import h5py
import numpy as np

n, elems, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
a = np.zeros(elems, dtype=np.float64)
with h5py.File(path, "w") as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple((elems,))
    d = h5py.Dataset(h5py.h5d.create(f.id, b"d", h5py.h5t.NATIVE_DOUBLE, space, dcpl=dcpl))
    t0 = time.perf_counter_ns()
    for i in range(n):
        a[0] = i
        d[...] = a
    t = time.perf_counter_ns() - t0
    if d[...][0] != n - 1:
        sys.exit("h5py-calls: the last write read back differs")
print("%.1f" % (t / n))
