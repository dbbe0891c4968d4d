// SPDX-License-Identifier: GPL-2.0-or-later
#include "advice_limits.h"

#include "util.h"

void ioacct_advice_limits_defaults(struct ioacct_advice_limits *lim)
{
	*lim = (struct ioacct_advice_limits){
		.small_share = 10,
		.small_min = 1000,
		.rw_share = 10,
		.meta_share = 30,
		.meta_min_ns = 1 * NSEC_PER_SEC,
		.meta_high_ns = 30 * NSEC_PER_SEC,
		.meta_per_mib = 100,
		.meta_ops_min = 1000,
		.fsync_min = 100,
		.fsync_share = 10,
		.tiny_files_min = 1000,
		.tiny_file_size = 65536,
		.burst_ratio = 10,
		.burst_min_mibps = 100,
		.shared_meta_ops = 10000,
		.local_share = 50,
		.step_imbalance = 15,
		.notfound_min = 10000,
		.node_imbalance = 25,
		.pcache_min_mib = 64,
		.hit_ratio = 50,
		.ra_waste = 25,
		.mmap_faults_min = 1000,
		.file_writes_min = 1000,
		.file_small_write = 65536,
		.file_reread = 4,
		.file_reread_min_mib = 64,
		.file_reads_min = 1000,
		.file_random_share = 50,
		.file_random_min_mib = 256,
		.rpc_attr_min = 20,
		.rpc_writes_min = 20,
		.rpc_small_write = 4096,
	};
}
