# SPDX-License-Identifier: GPL-2.0-or-later
"""The h5py acceptance program of issue 39 (76-h5py.sh), for Debian's
python3-h5py (run with /usr/bin/python3): in FILE, f['x'] = 5,000 float32
(h5py makes it with H5Dcreate_anon and links it: Darshan 3.5 has no record
of it), a 100 x 100 int64 dataset 'y' written in 10 slices of 10 rows, each
slice given one row that h5py broadcasts (the issue's 100 H5Dwrite: h5py 3.7
writes a broadcast source one row at a time), and 'z', the same shape written
in 10 slices of 10 whole rows (one H5Dwrite each); both read whole and
checked."""
import sys

import h5py
import numpy as np

path = sys.argv[1]
data = np.arange(10000, dtype=np.int64).reshape(100, 100)
with h5py.File(path, "w") as f:
    f["x"] = np.arange(5000, dtype=np.float32)
    y = f.create_dataset("y", (100, 100), dtype=np.int64)
    for k in range(10):
        y[k * 10:(k + 1) * 10] = data[k * 10]
    if not (y[...] == np.repeat(data[::10], 10, axis=0)).all():
        sys.exit("h5py_prog: y read back differs")
    z = f.create_dataset("z", (100, 100), dtype=np.int64)
    for k in range(10):
        z[k * 10:(k + 1) * 10] = data[k * 10:(k + 1) * 10]
    if not (z[...] == data).all():
        sys.exit("h5py_prog: z read back differs")
