# SPDX-License-Identifier: GPL-2.0-or-later
"""The h5py acceptance program of issue 39 (76-h5py.sh), for Debian's
python3-h5py (run with /usr/bin/python3): in FILE, f['x'] = 5,000 float32
(h5py makes it with H5Dcreate_anon and links it: Darshan 3.5 has no record
of it), and a 100 x 100 int64 dataset 'y' written in 10 slices of 10 rows,
then read whole and checked."""
import sys

import h5py
import numpy as np

path = sys.argv[1]
data = np.arange(10000, dtype=np.int64).reshape(100, 100)
with h5py.File(path, "w") as f:
    f["x"] = np.arange(5000, dtype=np.float32)
    y = f.create_dataset("y", (100, 100), dtype=np.int64)
    for k in range(10):
        y[k * 10:(k + 1) * 10] = data[k * 10:(k + 1) * 10]
    if not (y[...] == data).all():
        sys.exit("h5py_prog: y read back differs")
