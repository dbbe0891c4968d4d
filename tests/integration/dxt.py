# SPDX-License-Identifier: GPL-2.0-or-later
# The tests' checker of .darshan logs with DXT_POSIX records: parses a log
# with zlib and struct alone, not our reader, by darshan-log-format.h and
# darshan-dxt-log-format.h (../shared/docs/darshan.md). log(path) ->
# (records, run time in s, metadata dict, module ids with a region).
import socket, struct, sys, zlib
def log(path):
    d = open(path, "rb").read()
    assert d[:8] == b"3.41\0\0\0\0" and struct.unpack_from("<q", d, 8)[0] == 6567223
    name_off, name_len = struct.unpack_from("<QQ", d, 32)
    maps = [struct.unpack_from("<QQ", d, 48 + 16 * i) for i in range(64)]
    vers = struct.unpack_from("<64I", d, 1072)
    job = zlib.decompress(d[1328:name_off])
    raw = zlib.decompress(d[name_off:name_off + name_len])
    names, o = {}, 0
    while o < len(raw):
        rid, = struct.unpack_from("<Q", raw, o)
        end = raw.index(b"\0", o + 8)
        names[rid] = raw[o + 8:end].decode()
        o = end + 1
    recs = []
    if maps[10][1]:
        assert vers[10] == 1, "DXT_POSIX version %d" % vers[10]
        r = zlib.decompress(d[maps[10][0]:maps[10][0] + maps[10][1]])
        o = 0
        while o < len(r):
            rid, rank, shared = struct.unpack_from("<Qqq", r, o)
            host = r[o + 24:o + 88].rstrip(b"\0").decode()
            nw, nr = struct.unpack_from("<qq", r, o + 88)
            o += 104
            segs = [struct.unpack_from("<qqdd", r, o + 32 * i) for i in range(nw + nr)]
            o += 32 * (nw + nr)
            recs.append(dict(path=names[rid], rank=rank, shared=shared, host=host,
                             w=segs[:nw], r=segs[nw:]))
        assert o == len(r), "DXT region: %d bytes left over" % (len(r) - o)
    s, sn, e, en = struct.unpack_from("<4q", job, 8)
    meta = dict(l.split("=", 1) for l in job[56:56 + 1024].rstrip(b"\0").decode().splitlines() if "=" in l)
    return recs, (e * 1e9 + en - s * 1e9 - sn) / 1e9, meta, [i for i in range(64) if maps[i][1]]
