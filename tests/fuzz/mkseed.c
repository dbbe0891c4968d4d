// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Writes seed logs for the fuzzer into a directory: what the sample logs
 * lack, format 3.41 with HEATMAP records, written by ioacct itself (one
 * zlib log with DXT_POSIX trace records, per-file POSIX records and H5F and
 * H5D records, and one job of many bins and mounts).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "darshan.h"
#include "filebuild.h"
#include "jobbuild.h"
#include "report.h"

/* An HDF5 record of rank 0 (issue 39): the H5F and H5D modules' reading code gets a seed. */
static void h5rec(struct jb *b, uint32_t kind, const char *name, uint64_t writes, uint64_t bytes)
{
	struct ioacct_jobdata *jd = b->jd;
	struct ioacct_h5rec *h;

	jd->h5 = jb_grow(jd->h5, jd->nh5 + 1, sizeof(*jd->h5));
	h = &jd->h5[jd->nh5++];
	memset(h, 0, sizeof(*h));
	jd->h5_loaded = true;
	h->kind = kind;
	h->opens = 1;
	h->writes = writes;
	h->bytes_written = bytes;
	h->datatype_size = 8;
	h->size_written[ioacct_size_bin(bytes)] = writes;
	h->write_ns = 1000;
	ioacct_strlcpy(h->name, name, sizeof(h->name));
}

static int write_job(struct jb *b, const char *dir, const char *name, bool dxt)
{
	struct ioacct_report *r = ioacct_report_create(b->jd, NULL, NULL);
	struct ioacct_darshan_log *log = r ? ioacct_darshan_from_report(r, false) : NULL;
	char path[4096], err[512];
	int ret = 1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* A trace as iorun --trace writes it: two files, writes and reads. */
	for (int i = 0; dxt && log && i < 6; i++) {
		struct ioacct_darshan_dxt_seg seg = { 4096 * i, 4096, 0.5 * i, 0.5 * i + 0.25 };

		if (ioacct_darshan_dxt_add(log, i % 2 ? "/scratch/a" : "/scratch/b", 0, "node1",
					   i < 4, &seg)) {
			ioacct_darshan_free(log);
			log = NULL;
		}
	}
	if (log && ioacct_darshan_write_file(log, path, err, sizeof(err)) == 0)
		ret = 0;
	else
		fprintf(stderr, "mkseed: %s: %s\n", path, log ? err : "cannot build the log");
	ioacct_darshan_free(log);
	ioacct_report_destroy(r);
	ioacct_jobdata_free(b->jd);
	return ret;
}

int main(int argc, char **argv)
{
	struct jb b;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: mkseed DIR\n");
		return 2;
	}
	jb_init(&b, JB_SEC, 30 * JB_SEC);
	jb_mount(&b, 1, "/", "ext4");
	jb_mount(&b, 2, "/scratch", "lustre");
	jb_step(&b, 0, 0, 30 * JB_SEC);
	jb_add(&b, 0, 2, IOACCT_OP_OPEN, 0, 3, 1, 0, 100);
	jb_add(&b, 0, 2, IOACCT_OP_WRITE, 2, 16, 0, 16 * JB_MIB, 5000);
	jb_add(&b, 0, 2, IOACCT_OP_READ, 20, 4, 0, 4 * 4096, 50);
	jb_add(&b, 0, 1, IOACCT_OP_STAT, 29, 9, 2, 0, 7);
	jb_file_rw(jb_file(&b, 0, 0, 2, 8 << 20 | 1, 5, "/scratch/a"), false, 10, JB_MIB, 3000,
		   2 * (int64_t)JB_SEC, 3 * (int64_t)JB_SEC);
	jb_file_rw(jb_file(&b, 0, -1, 2, 0, 0, ""), true, 4, 4096, 50, 20 * (int64_t)JB_SEC,
		   21 * (int64_t)JB_SEC);
	h5rec(&b, IOACCT_H5REC_FILE, "/scratch/t.h5", 0, 0);
	h5rec(&b, IOACCT_H5REC_DATASET, "/scratch/t.h5:/a", 1, 8000);
	h5rec(&b, IOACCT_H5REC_DATASET, "/scratch/t.h5:/g/b", 4, 262144);
	ret = write_job(&b, argv[1], "ioacct-341.darshan", true);

	jb_init(&b, JB_SEC / 10, 100 * JB_SEC);
	for (uint32_t m = 0; m < 6; m++) {
		char path[64];

		snprintf(path, sizeof(path), "/mnt/fs%u", m);
		jb_mount(&b, 10 + m, path, m % 2 ? "nfs" : "xfs");
		for (uint32_t bin = m; bin < 1000; bin += 7)
			jb_add(&b, 0, 10 + m, bin % 3 ? IOACCT_OP_WRITE : IOACCT_OP_READ, bin, 2, 0,
			       2 * 1000 * (bin + 1), 10);
	}
	jb_step(&b, 0, 0, 100 * JB_SEC);
	return ret | write_job(&b, argv[1], "ioacct-341-bins.darshan", false);
}
