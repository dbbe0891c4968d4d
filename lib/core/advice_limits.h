/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The thresholds of the report's advice rules (lib/report/report.c), config
 * keys advice_* (ioacct.conf(5)). They live here, below the report, because
 * the configuration (config.c) reads them and the core uses nothing above it.
 * Shares are percentages, 0 .. 100.
 */
#ifndef IOACCT_ADVICE_LIMITS_H
#define IOACCT_ADVICE_LIMITS_H

#include <stdint.h>

struct ioacct_advice_limits {
	uint32_t small_share;      /* advice_small_requests_share = 10 (%) */
	uint32_t small_min;        /* advice_small_requests_min = 1000 (requests) */
	uint32_t rw_share;         /* advice_rw_intensive_share = 10 (%) */
	uint32_t meta_share;       /* advice_meta_time_share = 30 (% of I/O time) */
	uint64_t meta_min_ns;      /* advice_meta_time_min = 1 (s) */
	uint64_t meta_high_ns;     /* advice_meta_time_high = 30 (s) */
	uint32_t meta_per_mib;     /* advice_meta_ops_per_mib = 100 (opens + stats per MiB) */
	uint32_t meta_ops_min;     /* advice_meta_ops_min = 1000 (opens + stats) */
	uint32_t fsync_min;        /* advice_fsync_min = 100 (fsyncs) */
	uint32_t fsync_share;      /* advice_fsync_write_share = 10 (% of write calls) */
	uint32_t tiny_files_min;   /* advice_tiny_files_min = 1000 (files created) */
	uint32_t tiny_file_size;   /* advice_tiny_file_size = 65536 (bytes written per file) */
	uint32_t burst_ratio;      /* advice_burst_ratio = 10 (peak / mean bandwidth) */
	uint32_t burst_min_mibps;  /* advice_burst_min_bandwidth = 100 (MiB/s at the peak) */
	uint32_t shared_meta_ops;  /* advice_shared_meta_ops = 10000 (metadata calls) */
	uint32_t local_share;      /* advice_local_share = 50 (% of the bytes) */
	uint32_t step_imbalance;   /* advice_step_imbalance = 15 (%) */
	uint32_t notfound_min;     /* advice_notfound_min = 10000 (lookups that found nothing) */
	uint32_t node_imbalance;   /* advice_node_imbalance = 25 (% over the nodes' mean I/O time) */
	/* The page-cache and mmap views (issue 14). */
	uint32_t pcache_min_mib;   /* advice_pcache_min = 64 (MiB read or missed on a mount) */
	uint32_t hit_ratio;        /* advice_hit_ratio = 50 (% hit ratio under which to advise) */
	uint32_t ra_waste;         /* advice_readahead_waste = 25 (% of the misses never read) */
	uint32_t mmap_faults_min;  /* advice_mmap_faults_min = 1000 (faults on file mappings) */
	/* The per-file records (issue 26): rules that name the file. */
	uint32_t file_writes_min;  /* advice_file_writes_min = 1000 (writes to one shared file) */
	uint32_t file_small_write; /* advice_file_small_write = 65536 (bytes per write, mean) */
	uint32_t file_reread;      /* advice_file_reread = 4 (bytes read / bytes of the file read) */
	uint32_t file_reread_min_mib; /* advice_file_reread_min = 64 (MiB read from the file) */
	uint32_t file_reads_min;   /* advice_file_reads_min = 1000 (reads of one file) */
	uint32_t file_random_share; /* advice_file_random_share = 50 (% of reads sequential) */
	uint32_t file_random_min_mib; /* advice_file_random_size = 256 (MiB: a large file) */
	/* The RPC layer (issue 40): rules on a mount's server calls. */
	uint32_t rpc_attr_min;     /* advice_rpc_attr_min = 20 (LOOKUP + GETATTR RPCs) */
	uint32_t rpc_writes_min;   /* advice_rpc_writes_min = 20 (WRITE RPCs) */
	uint32_t rpc_small_write;  /* advice_rpc_small_write = 4096 (bytes sent per WRITE, mean) */
};

/* Fills every threshold with its default (the values in the comments above). */
void ioacct_advice_limits_defaults(struct ioacct_advice_limits *lim);

#endif /* IOACCT_ADVICE_LIMITS_H */
