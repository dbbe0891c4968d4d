#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""darshan_parser.py LOG: what Darshan 3.5.0's darshan-parser prints of a log
of format 3.41 (issue 38), made from the bytes alone with zlib and struct,
not our reader, by darshan-log-format.h, darshan-posix-log-format.h,
darshan-mpiio-log-format.h and darshan-heatmap-log-format.h: its job lines
("# exe: ...", "# nprocs: ...", "# run time: ...", "# metadata: k = v"), its
mount entries and one tab-separated line per counter of each POSIX, MPI-IO
and HEATMAP record, in the log's order, the file's mount point and fs type
found as darshan-parser finds them (the longest mount point that begins the
name, or UNKNOWN). darshan-parser's own lines of these kinds were checked
equal to these on a log of 68-darshan-tools.sh (docs/darshan.md); the tests
use this where darshan-util is not installed (it is no Debian package)."""
import struct
import sys
import time
import zlib

POSIX = ("OPENS FILENOS DUPS READS WRITES SEEKS STATS MMAPS FSYNCS FDSYNCS RENAME_SOURCES "
         "RENAME_TARGETS RENAMED_FROM MODE BYTES_READ BYTES_WRITTEN MAX_BYTE_READ "
         "MAX_BYTE_WRITTEN CONSEC_READS CONSEC_WRITES SEQ_READS SEQ_WRITES RW_SWITCHES "
         "MEM_NOT_ALIGNED MEM_ALIGNMENT FILE_NOT_ALIGNED FILE_ALIGNMENT MAX_READ_TIME_SIZE "
         "MAX_WRITE_TIME_SIZE").split()
BINS = "0_100 100_1K 1K_10K 10K_100K 100K_1M 1M_4M 4M_10M 10M_100M 100M_1G 1G_PLUS".split()
POSIX += ["SIZE_READ_" + b for b in BINS] + ["SIZE_WRITE_" + b for b in BINS]
POSIX += ["STRIDE%d_STRIDE" % i for i in range(1, 5)] + ["STRIDE%d_COUNT" % i for i in range(1, 5)]
POSIX += ["ACCESS%d_ACCESS" % i for i in range(1, 5)] + ["ACCESS%d_COUNT" % i for i in range(1, 5)]
POSIX += "FASTEST_RANK FASTEST_RANK_BYTES SLOWEST_RANK SLOWEST_RANK_BYTES".split()
POSIX = ["POSIX_" + c for c in POSIX]
TIMES = ["OPEN_START_TIMESTAMP", "READ_START_TIMESTAMP", "WRITE_START_TIMESTAMP",
         "CLOSE_START_TIMESTAMP", "OPEN_END_TIMESTAMP", "READ_END_TIMESTAMP",
         "WRITE_END_TIMESTAMP", "CLOSE_END_TIMESTAMP", "READ_TIME", "WRITE_TIME", "META_TIME",
         "MAX_READ_TIME", "MAX_WRITE_TIME", "FASTEST_RANK_TIME", "SLOWEST_RANK_TIME",
         "VARIANCE_RANK_TIME", "VARIANCE_RANK_BYTES"]
POSIX_F = ["POSIX_F_" + c for c in TIMES]
MPIIO = ("INDEP_OPENS COLL_OPENS INDEP_READS INDEP_WRITES COLL_READS COLL_WRITES SPLIT_READS "
         "SPLIT_WRITES NB_READS NB_WRITES SYNCS HINTS VIEWS MODE BYTES_READ BYTES_WRITTEN "
         "RW_SWITCHES MAX_READ_TIME_SIZE MAX_WRITE_TIME_SIZE").split()
MPIIO += ["SIZE_READ_AGG_" + b for b in BINS] + ["SIZE_WRITE_AGG_" + b for b in BINS]
MPIIO += ["ACCESS%d_ACCESS" % i for i in range(1, 5)] + ["ACCESS%d_COUNT" % i for i in range(1, 5)]
MPIIO += "FASTEST_RANK FASTEST_RANK_BYTES SLOWEST_RANK SLOWEST_RANK_BYTES".split()
MPIIO = ["MPIIO_" + c for c in MPIIO]
MPIIO_F = ["MPIIO_F_" + c for c in TIMES]


def region(d, off, length):
    return zlib.decompress(d[off:off + length]) if length else b""


def main():
    d = open(sys.argv[1], "rb").read()
    assert d[:8] == b"3.41\0\0\0\0", "not a log of format 3.41"
    assert struct.unpack_from("<q", d, 8)[0] == 6567223, "bad magic number"
    assert d[16] == 0, "not zlib-compressed"
    name_off, name_len = struct.unpack_from("<QQ", d, 32)
    maps = [struct.unpack_from("<QQ", d, 48 + 16 * i) for i in range(64)]
    vers = struct.unpack_from("<64I", d, 1072)
    job = region(d, 1328, name_off - 1328)[:4096]
    uid, s, sn, e, en, nprocs, jobid = struct.unpack_from("<7q", job, 0)
    meta = job[56:56 + 1024].split(b"\0")[0].decode()
    rest = job[56 + 1024:].split(b"\0")[0].decode().split("\n")
    exe, mounts = rest[0], [tuple(l.split("\t", 1)) for l in rest[1:] if "\t" in l]
    print("# darshan log version: 3.41")
    print("# compression method: ZLIB")
    print("# exe: %s" % exe)
    print("# uid: %d" % uid)
    print("# jobid: %d" % jobid)
    print("# start_time: %d" % s)
    print("# start_time_asci: %s" % time.ctime(s))
    print("# end_time: %d" % e)
    print("# end_time_asci: %s" % time.ctime(e))
    print("# nprocs: %d" % nprocs)
    print("# run time: %.4f" % ((e + en / 1e9) - (s + sn / 1e9)))
    for line in meta.split("\n")[:-1]:
        k, _, v = line.partition("=")
        print("# metadata: %s = %s" % (k, v))
    # darshan-util sorts the mount table by the length of the mount point, longest first.
    mounts = sorted(((p, t) for t, p in mounts), key=lambda m: -len(m[0]))
    for p, t in mounts:
        print("# mount entry:\t%s\t%s" % (p, t))
    raw, names, o = region(d, name_off, name_len), {}, 0
    while o < len(raw):
        rid, = struct.unpack_from("<Q", raw, o)
        end = raw.index(b"\0", o + 8)
        names.setdefault(rid, raw[o + 8:end].decode())
        o = end + 1

    def where(name):
        for p, t in mounts:
            if name.startswith(p):
                return p, t
        return "UNKNOWN", "UNKNOWN"

    for mod, mid, ver, ints, floats in (("POSIX", 1, 4, POSIX, POSIX_F),
                                        ("MPI-IO", 2, 3, MPIIO, MPIIO_F)):
        r = region(d, *maps[mid])
        if r:
            assert vers[mid] == ver, "%s records of version %d" % (mod, vers[mid])
        size = 16 + 8 * (len(ints) + len(floats))
        assert len(r) % size == 0, "%s region: not whole records" % mod
        for o in range(0, len(r), size):
            rid, rank = struct.unpack_from("<Qq", r, o)
            c = struct.unpack_from("<%dq" % len(ints), r, o + 16)
            f = struct.unpack_from("<%dd" % len(floats), r, o + 16 + 8 * len(ints))
            name = names.get(rid, "")
            mnt = "\t".join(where(name))
            for k, v in zip(ints, c):
                print("%s\t%d\t%d\t%s\t%d\t%s\t%s" % (mod, rank, rid, k, v, name, mnt))
            for k, v in zip(floats, f):
                print("%s\t%d\t%d\t%s\t%f\t%s\t%s" % (mod, rank, rid, k, v, name, mnt))
    r, o = region(d, *maps[15]), 0
    while o < len(r):
        rid, rank, width, nbins = struct.unpack_from("<QqdQ", r, o)
        bins = struct.unpack_from("<%dq" % (2 * nbins), r, o + 48)
        name = names.get(rid, "")
        mnt = "\t".join(where(name))
        print("HEATMAP\t%d\t%d\tHEATMAP_F_BIN_WIDTH_SECONDS\t%f\t%s\t%s" % (rank, rid, width, name, mnt))
        # A record holds its write bins, then its read bins; darshan-parser prints reads first.
        for kind, part in (("READ", bins[nbins:]), ("WRITE", bins[:nbins])):
            for i, v in enumerate(part):
                print("HEATMAP\t%d\t%d\tHEATMAP_%s_BIN_%d\t%d\t%s\t%s" % (rank, rid, kind, i, v, name, mnt))
        o += 48 + 16 * nbins
    return 0


if __name__ == "__main__":
    sys.exit(main())
