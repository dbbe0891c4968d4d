/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The protocol's attributes, as an X-macro: the one list proto.c generates
 * its enum of attribute numbers and its table of their names and kinds from.
 * One number space for every message, so that a number has the same kind
 * wherever it appears. Adding an attribute is a row here (the next free
 * number) and a row in the field table of each message that carries it.
 *
 * X(NAME, number, name, kind), one row per attribute, in number order.
 * Never renumber, never reuse a number: both ends of the socket must agree,
 * and a client and a daemon of different versions do (proto.h).
 *
 *   NAME    IOACCT_ATTR_NAME in proto.c
 *   number  its type on the wire (1..65535; 0 is none)
 *   name    what error messages call it: "attribute 7 (cgroup)"
 *   kind    its value: U32, I32, U64, I64 (little-endian), STRING (no NUL),
 *           HIST (IOACCT_NR_SIZE_BINS u64), ERRCLS (IOACCT_NR_ERR_CLASSES
 *           u64), U64S (u64 words, exactly as many as its field holds),
 *           NESTED (a list of attributes: one row of a reply's list)
 *
 * No includes, no types: proto.c's private list, included there only.
 */
#ifndef IOACCT_PROTO_ATTRS_H
#define IOACCT_PROTO_ATTRS_H

#define IOACCT_PROTO_ATTRS(X)                                                           \
	X(STATUS, 1, status, I32)                                                       \
	X(ERROR, 2, error, STRING)                                                      \
	X(JOB_ID, 3, job_id, U64)                                                       \
	X(STEP_ID, 4, step_id, U32)                                                     \
	X(UID, 5, uid, U32)                                                             \
	X(GID, 6, gid, U32)                                                             \
	X(CGROUP, 7, cgroup, STRING)                                                    \
	X(PID, 8, pid, I32)                                                             \
	X(CLUSTER, 9, cluster, STRING)                                                  \
	X(SOURCE, 10, source, STRING)                                                   \
	X(USER, 11, user, STRING)                                                       \
	X(JOB_NAME, 12, job_name, STRING)                                               \
	X(WORKDIR, 13, workdir, STRING)                                                 \
	X(BIN_WIDTH_NS, 14, bin_width_ns, U64)                                          \
	X(HAS_ARRAY, 15, has_array, U32)                                                \
	X(ARRAY_JOB_ID, 16, array_job_id, U32)                                          \
	X(ARRAY_TASK_ID, 17, array_task_id, U32)                                        \
	X(STATE, 18, state, STRING)                                                     \
	X(EXIT_CODE, 19, exit_code, I32)                                                \
	X(JOB_KEY, 20, job_key, I64)                                                    \
	X(SLOT, 21, slot, U32)                                                          \
	X(START_MONO_NS, 22, start_mono_ns, U64)                                        \
	X(START_NS, 23, start_ns, I64)                                                  \
	X(PROBE_MODE, 24, probe_mode, STRING)                                           \
	X(VERSION, 25, version, STRING)                                                 \
	X(JOBS_RUNNING, 26, jobs_running, U32)                                          \
	X(CGROUPS_WATCHED, 27, cgroups_watched, U32)                                    \
	X(DROPPED_EVENTS, 28, dropped_events, U64)                                      \
	X(UPTIME_S, 29, uptime_s, U64)                                                  \
	X(DETAIL, 30, detail, STRING)                                                   \
	X(DROPPED_BYTES, 31, dropped_bytes, U64)                                        \
	X(ROW, 32, row, NESTED)                                                         \
	X(OP, 33, op, U32)                                                              \
	/* A mount's key when it fits 32 bits, for peers before mnt_key (150). */      \
	X(MNT_ID, 34, mnt_id, U32)                                                      \
	X(MNT_PATH, 35, mnt_path, STRING)                                               \
	X(MNT_FSTYPE, 36, mnt_fstype, STRING)                                           \
	X(MNT_SOURCE, 37, mnt_source, STRING)                                           \
	X(BYTES, 38, bytes, U64)                                                        \
	X(CALLS, 39, calls, U64)                                                        \
	X(ERRORS, 40, errors, U64)                                                      \
	X(NS, 41, ns, U64)                                                              \
	X(SIZE_HIST, 42, size_hist, HIST)                                               \
	X(END_NS, 43, end_ns, I64)                                                      \
	X(NODE, 44, node, STRING)                                                       \
	X(QJOB, 45, job, NESTED)                                                        \
	X(QSTEP, 46, step, NESTED)                                                      \
	X(QMOUNT, 47, mount, NESTED)                                                    \
	X(QTOTAL, 48, total, NESTED)                                                    \
	X(QPEAK, 49, peak, NESTED)                                                      \
	X(PEAK_READ, 50, peak_read, U64)                                                \
	X(PEAK_WRITE, 51, peak_write, U64)                                              \
	X(MORE, 52, more, U32)                                                          \
	X(JOB_IDS, 53, job_ids, STRING)                                                 \
	X(UIDS, 54, uids, STRING)                                                       \
	X(CLUSTERS, 55, clusters, STRING)                                               \
	X(PEAKS, 56, peaks, U32)                                                        \
	X(ERR_CLASSES, 57, err_classes, ERRCLS)                                         \
	X(BIN, 58, bin, U32)                                                            \
	X(QSERIES, 59, series, NESTED)                                                  \
	/* A snapshot reply's watched cgroups (iotrace --job): */                       \
	/* older clients ignore them. */                                                \
	X(HIER, 60, hier, U32)                                                          \
	X(WATCH, 61, watch, NESTED)                                                     \
	/* sbatch --io-monitor=trace: register asks for a trace, */                     \
	/* its reply says why there is none. */                                         \
	X(TRACE_MAX, 62, trace_max, U64)                                                \
	X(TASK_RANK, 63, task_rank, I32)                                                \
	X(TRACE_ERROR, 64, trace_error, STRING)                                         \
	/* 65..69 free; 70 on: the cluster store's. */                                  \
	X(NODE_NAME, 70, node_name, STRING)                                             \
	X(BY_NODE, 71, by_node, U32)                                                    \
	X(LOCAL, 72, local, U32)                                                        \
	X(SKEW_NS, 73, skew_ns, U64)                                                    \
	X(QNODE, 74, node_part, NESTED)                                                 \
	X(READ_BYTES, 75, read_bytes, U64)                                              \
	X(WRITE_BYTES, 76, write_bytes, U64)                                            \
	X(READS, 77, reads, U64)                                                        \
	X(WRITES, 78, writes, U64)                                                      \
	/* FINISH_JOB's report of a job of several nodes, */                            \
	/* merged by ioacctd (issue 13). */                                             \
	X(REPORT_PATH, 79, report_path, STRING)                                         \
	X(REPORT_FORMATS, 80, report_formats, U32)                                      \
	X(REPORT_NODES, 81, report_nodes, STRING)                                       \
	X(REPORT_COPY_DIR, 82, report_copy_dir, STRING)                                 \
	X(REPORT_MERGED, 83, report_merged, U32)                                        \
	/* A requeued job's runs kept apart (issue 28): Slurm's restart */              \
	/* count on register, finish and a job row; the run a job request */            \
	/* asks for (restart + 1, 0: the last); every run of a query. */                \
	X(RESTART, 84, restart, U32)                                                    \
	X(RUN, 85, run, U32)                                                            \
	X(DUPLICATES, 86, duplicates, U32)                                              \
	/* Retention (issue 28): a downsampled job's first bin width. */                \
	X(ORIG_BIN_WIDTH_NS, 87, orig_bin_width_ns, U64)                            \
	/* 88..89 free. A job reply's per-file records (issue 26): */                  \
	/* `files` asks for a page of them and says they were read; */                  \
	/* a file row reuses step_id, task_rank, mnt_id, read_bytes, */                 \
	/* write_bytes, reads and writes. */                                            \
	X(FILES, 90, files, U32)                                                        \
	X(QFILE, 91, file, NESTED)                                                      \
	X(FILE_DEV, 92, file_dev, U32)                                                  \
	X(FILE_INO, 93, file_ino, U64)                                                  \
	X(FILE_PATH, 94, file_path, STRING)                                             \
	X(OPENS, 95, opens, U64)                                                        \
	X(STATS, 96, stats, U64)                                                        \
	X(FSYNCS, 97, fsyncs, U64)                                                      \
	X(READ_NS, 98, read_ns, U64)                                                    \
	X(WRITE_NS, 99, write_ns, U64)                                                  \
	X(META_NS, 100, meta_ns, U64)                                                   \
	X(MAX_BYTE_READ, 101, max_byte_read, I64)                                       \
	X(MAX_BYTE_WRITTEN, 102, max_byte_written, I64)                                 \
	X(SEQ_READS, 103, seq_reads, U64)                                               \
	X(SEQ_WRITES, 104, seq_writes, U64)                                             \
	X(CONSEC_READS, 105, consec_reads, U64)                                         \
	X(CONSEC_WRITES, 106, consec_writes, U64)                                       \
	X(FIRST_READ_NS, 107, first_read_ns, I64)                                       \
	X(LAST_READ_NS, 108, last_read_ns, I64)                                         \
	X(FIRST_WRITE_NS, 109, first_write_ns, I64)                                     \
	X(LAST_WRITE_NS, 110, last_write_ns, I64)                                       \
	X(SIZE_READ, 111, size_read, HIST)                                              \
	X(SIZE_WRITTEN, 112, size_written, HIST)                                        \
	X(SEEKS, 113, seeks, U64)                                                       \
	/* A file's page-cache and mmap views' bytes. */                                \
	X(MMAP_BYTES, 114, mmap_bytes, U64)                                             \
	X(CACHE_MISS_BYTES, 115, cache_miss_bytes, U64)                                 \
	/* A job of several nodes: a file, MPI-IO or HDF5 record's node part */        \
	/* (model.h: an index of the job's node_part rows), and a cursor's. */          \
	X(NODE_PART_INDEX, 116, node_part_index, U32)                                   \
	/* 117..119 free. A job reply's MPI-IO records (issue 27): */                  \
	/* `mpiio` asks for a page of them and says they were read; */                  \
	/* a row reuses step_id, task_rank, pid, file_path, read_bytes, */              \
	/* write_bytes, read_ns, write_ns, meta_ns, size_read, size_written; */         \
	/* a request's cursor: step_id, task_rank, pid, file_path, node_part_index. */  \
	X(MPIIO, 120, mpiio, U32)                                                       \
	X(QMPIIO, 121, mpiio_file, NESTED)                                              \
	X(INDEP_OPENS, 122, indep_opens, U64)                                           \
	X(COLL_OPENS, 123, coll_opens, U64)                                             \
	X(INDEP_READS, 124, indep_reads, U64)                                           \
	X(INDEP_WRITES, 125, indep_writes, U64)                                         \
	X(COLL_READS, 126, coll_reads, U64)                                             \
	X(COLL_WRITES, 127, coll_writes, U64)                                           \
	X(SPLIT_READS, 128, split_reads, U64)                                           \
	X(SPLIT_WRITES, 129, split_writes, U64)                                         \
	X(NB_READS, 130, nb_reads, U64)                                                 \
	X(NB_WRITES, 131, nb_writes, U64)                                               \
	X(SYNCS, 132, syncs, U64)                                                       \
	X(VIEWS, 133, views, U64)                                                       \
	X(UNSIZED_READS, 134, unsized_reads, U64)                                       \
	X(UNSIZED_WRITES, 135, unsized_writes, U64)                                     \
	/* sbatch --io-monitor=spans: register asks for OTLP spans */                   \
	/* (IOACCT_SPANS_*), its reply says why there are none. */                      \
	X(SPANS, 140, spans, U32)                                                       \
	X(SPANS_ERROR, 141, spans_error, STRING)                                        \
	/* 142..149 free. A mount's 64-bit key (issue 36): mnt_id_unique or the */      \
	/* 32-bit id (model.h); mnt_id (34) beside it while it fits 32 bits. */         \
	X(MNT_KEY, 150, mnt_key, U64)                                                   \
	/* 151..154 free. A file row's life of its inode (issue 36; also the */         \
	/* files cursor's), its read/write switches and most common access */           \
	/* sizes with their counts (issue 38). */                                       \
	X(FILE_GEN, 155, file_gen, U32)                                                 \
	X(RW_SWITCHES, 156, rw_switches, U64)                                           \
	X(ACCESS1, 157, access1, U64)                                                   \
	X(ACCESS2, 158, access2, U64)                                                   \
	X(ACCESS3, 159, access3, U64)                                                   \
	X(ACCESS4, 160, access4, U64)                                                   \
	X(ACCESS1_COUNT, 161, access1_count, U64)                                       \
	X(ACCESS2_COUNT, 162, access2_count, U64)                                       \
	X(ACCESS3_COUNT, 163, access3_count, U64)                                       \
	X(ACCESS4_COUNT, 164, access4_count, U64)                                       \
	/* A run's name beside job id and restart (issue 36): */                        \
	/* a job row's; a job request's with restart, its later pages naming */        \
	/* the run they continue exactly. 166..174 free. */                             \
	X(RUN_START, 165, run_start, I64)                                               \
	/* ioacctd and its unprivileged workers (issue 37, daemon/worker.h): */         \
	/* a message's one number, whose meaning the message says (proto.h, */          \
	/* struct ioacct_req_worker); an ELF file's function offsets; the nodes */      \
	/* a merged report was written without; a collector's Retry-After in */        \
	/* ms (-1: none). The cluster store's retention through its worker: */          \
	/* the cutoff (seconds since the epoch) and what a purge or a */                 \
	/* downsample did (runs, node parts, series rows, months whole). */              \
	/* 184 free. */                                                                  \
	X(CODE, 175, code, U32)                                                         \
	X(OFFSETS, 176, offsets, U64S)                                                  \
	X(MISSING_NODES, 177, missing_nodes, STRING)                                    \
	X(RETRY_AFTER, 178, retry_after, I64)                                           \
	X(CUTOFF, 179, cutoff, I64)                                                     \
	X(PURGED_RUNS, 180, purged_runs, U64)                                           \
	X(PURGED_PARTS, 181, purged_parts, U64)                                         \
	X(PURGED_SERIES, 182, purged_series, U64)                                       \
	X(PURGED_MONTHS, 183, purged_months, U64)                                       \
	/* Issue 38: the job's command line (Darshan's exe), */                          \
	/* on register and in a job row. */                                              \
	X(CMDLINE, 185, cmdline, STRING)                                                 \
	/* Issue 39: library opens the MPI-IO library watch missed, in a job row. */    \
	X(LIB_OPENS_MISSED, 210, lib_opens_missed, U64)                                 \
	/* Issue 39: a job reply's HDF5 records; `hdf5` asks for a page of them */       \
	/* and says they were read; a row reuses step_id, task_rank, pid, */             \
	/* file_path (its name), opens, reads, writes, read_bytes, write_bytes, */      \
	/* unsized_reads, unsized_writes, rw_switches, read_ns, write_ns, meta_ns, */    \
	/* size_read, size_written; a request's cursor: step_id, task_rank, pid, */     \
	/* h5_kind, file_path, node_part_index. */                                       \
	X(HDF5, 211, hdf5, U32)                                                         \
	X(QHDF5, 212, hdf5_record, NESTED)                                              \
	X(H5_KIND, 213, h5_kind, U32)                                                   \
	X(FLUSHES, 214, flushes, U64)                                                   \
	X(NPOINTS_MAX, 215, npoints_max, U64)                                           \
	X(DATATYPE_SIZE, 216, datatype_size, U64)                                       \
	/* Issue 39: an HDF5 record's timestamps (ns from the job's start, 0 none), */  \
	/* slowest calls, dataspace, MPI-IO flags; 230 on, clear of other branches'. */ \
	X(H5_OPEN_START_NS, 230, h5_open_start_ns, U64)                                 \
	X(H5_OPEN_END_NS, 231, h5_open_end_ns, U64)                                     \
	X(H5_READ_START_NS, 232, h5_read_start_ns, U64)                                 \
	X(H5_READ_END_NS, 233, h5_read_end_ns, U64)                                     \
	X(H5_WRITE_START_NS, 234, h5_write_start_ns, U64)                               \
	X(H5_WRITE_END_NS, 235, h5_write_end_ns, U64)                                   \
	X(H5_CLOSE_START_NS, 236, h5_close_start_ns, U64)                               \
	X(H5_CLOSE_END_NS, 237, h5_close_end_ns, U64)                                   \
	X(H5_MAX_READ_NS, 238, h5_max_read_ns, U64)                                     \
	X(H5_MAX_READ_SIZE, 239, h5_max_read_size, U64)                                 \
	X(H5_MAX_WRITE_NS, 240, h5_max_write_ns, U64)                                   \
	X(H5_MAX_WRITE_SIZE, 241, h5_max_write_size, U64)                               \
	X(H5_DATASPACE_NDIMS, 242, h5_dataspace_ndims, U64)                             \
	X(H5_DATASPACE_NPOINTS, 243, h5_dataspace_npoints, U64)                         \
	X(H5_USE_MPIIO, 244, h5_use_mpiio, U64)                                         \
	X(H5_USE_MPIIO_COLLECTIVE, 245, h5_use_mpiio_collective, U64)                 \
	/* 246..249 free. Issue 40: a job reply's RPC rows; `rpc` asks for a */         \
	/* page of them and says they were read; a row reuses step_id, mnt_key */      \
	/* (mnt_id), bin, calls and errors; a request's cursor: step_id, */             \
	/* mnt_key, rpc_prog, rpc_vers, rpc_proc, rpc_flags, bin. */                    \
	X(RPC, 250, rpc, U32)                                                           \
	X(QRPC, 251, rpc_row, NESTED)                                                   \
	X(RPC_PROG, 252, rpc_prog, U32)                                                 \
	X(RPC_VERS, 253, rpc_vers, U32)                                                 \
	X(RPC_PROC, 254, rpc_proc, U32)                                                 \
	X(RPC_FLAGS, 255, rpc_flags, U32)                                               \
	X(RPC_NAME, 256, rpc_name, STRING)                                              \
	X(BYTES_SENT, 257, bytes_sent, U64)                                             \
	X(BYTES_RECV, 258, bytes_recv, U64)                                             \
	X(QUEUE_NS, 259, queue_ns, U64)                                                 \
	X(RTT_NS, 260, rtt_ns, U64)                                                     \
	X(EXECUTE_NS, 261, execute_ns, U64)                                             \
	X(RETRANS, 262, retrans, U64)                                                   \
	/* Issue 39: an HDF5 record's reads and writes by selection kind, its */         \
	/* chunk dims (IOACCT_H5_SELECT). */                                             \
	X(H5_REGULAR_HYPERSLAB_SELECTS, 263, h5_regular_hyperslab_selects, U64)         \
	X(H5_IRREGULAR_HYPERSLAB_SELECTS, 264, h5_irregular_hyperslab_selects, U64)     \
	X(H5_POINT_SELECTS, 265, h5_point_selects, U64)                                 \
	X(H5_UNKNOWN_SELECTS, 266, h5_unknown_selects, U64)                             \
	X(H5_CHUNK_KNOWN, 267, h5_chunk_known, U64)                                     \
	X(H5_CHUNK_SIZE_D1, 268, h5_chunk_size_d1, U64)                                 \
	X(H5_CHUNK_SIZE_D2, 269, h5_chunk_size_d2, U64)                                 \
	X(H5_CHUNK_SIZE_D3, 270, h5_chunk_size_d3, U64)                                 \
	X(H5_CHUNK_SIZE_D4, 271, h5_chunk_size_d4, U64)                                 \
	X(H5_CHUNK_SIZE_D5, 272, h5_chunk_size_d5, U64)

#endif /* IOACCT_PROTO_ATTRS_H */
