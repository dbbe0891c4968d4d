/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The field tables of the record rows a job reply's pages carry after its
 * series: per-file records (issue 26), MPI-IO (27), HDF5 (39) and RPC rows
 * (40), each every field of its struct. proto.c's private tables, included
 * there only, after its struct field, FIELD and MNT_FIELDS; apart so that
 * proto.c stays under the layout's size.
 */
#ifndef IOACCT_PROTO_ROWS_H
#define IOACCT_PROTO_ROWS_H

/* A file's record: every field of struct ioacct_file. */
#define QFILE(member, attr, flags) FIELD(struct ioacct_qfile_row, member, attr, flags)
static const struct field qfile_fields[] = {
	QFILE(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QFILE(f.step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	QFILE(f.rank, IOACCT_ATTR_TASK_RANK, 0),
	MNT_FIELDS(QFILE, f.mnt_id, F_REQUIRED),
	QFILE(f.dev, IOACCT_ATTR_FILE_DEV, 0),
	QFILE(f.ino, IOACCT_ATTR_FILE_INO, 0),
	QFILE(f.gen, IOACCT_ATTR_FILE_GEN, 0),
	QFILE(f.part, IOACCT_ATTR_NODE_PART_INDEX, 0),
	QFILE(f.path, IOACCT_ATTR_FILE_PATH, 0),
	QFILE(f.opens, IOACCT_ATTR_OPENS, 0),
	QFILE(f.reads, IOACCT_ATTR_READS, 0),
	QFILE(f.writes, IOACCT_ATTR_WRITES, 0),
	QFILE(f.stats, IOACCT_ATTR_STATS, 0),
	QFILE(f.fsyncs, IOACCT_ATTR_FSYNCS, 0),
	QFILE(f.bytes_read, IOACCT_ATTR_READ_BYTES, 0),
	QFILE(f.bytes_written, IOACCT_ATTR_WRITE_BYTES, 0),
	QFILE(f.read_ns, IOACCT_ATTR_READ_NS, 0),
	QFILE(f.write_ns, IOACCT_ATTR_WRITE_NS, 0),
	QFILE(f.meta_ns, IOACCT_ATTR_META_NS, 0),
	QFILE(f.max_byte_read, IOACCT_ATTR_MAX_BYTE_READ, 0),
	QFILE(f.max_byte_written, IOACCT_ATTR_MAX_BYTE_WRITTEN, 0),
	QFILE(f.seq_reads, IOACCT_ATTR_SEQ_READS, 0),
	QFILE(f.seq_writes, IOACCT_ATTR_SEQ_WRITES, 0),
	QFILE(f.consec_reads, IOACCT_ATTR_CONSEC_READS, 0),
	QFILE(f.consec_writes, IOACCT_ATTR_CONSEC_WRITES, 0),
	QFILE(f.first_read_ns, IOACCT_ATTR_FIRST_READ_NS, 0),
	QFILE(f.last_read_ns, IOACCT_ATTR_LAST_READ_NS, 0),
	QFILE(f.first_write_ns, IOACCT_ATTR_FIRST_WRITE_NS, 0),
	QFILE(f.last_write_ns, IOACCT_ATTR_LAST_WRITE_NS, 0),
	QFILE(f.size_read, IOACCT_ATTR_SIZE_READ, 0),
	QFILE(f.size_written, IOACCT_ATTR_SIZE_WRITTEN, 0),
	QFILE(f.mmap_bytes, IOACCT_ATTR_MMAP_BYTES, 0),
	QFILE(f.cache_miss_bytes, IOACCT_ATTR_CACHE_MISS_BYTES, 0),
	QFILE(f.seeks, IOACCT_ATTR_SEEKS, 0),
	QFILE(f.rw_switches, IOACCT_ATTR_RW_SWITCHES, 0),
	QFILE(f.access[0], IOACCT_ATTR_ACCESS1, 0),
	QFILE(f.access[1], IOACCT_ATTR_ACCESS2, 0),
	QFILE(f.access[2], IOACCT_ATTR_ACCESS3, 0),
	QFILE(f.access[3], IOACCT_ATTR_ACCESS4, 0),
	QFILE(f.access_count[0], IOACCT_ATTR_ACCESS1_COUNT, 0),
	QFILE(f.access_count[1], IOACCT_ATTR_ACCESS2_COUNT, 0),
	QFILE(f.access_count[2], IOACCT_ATTR_ACCESS3_COUNT, 0),
	QFILE(f.access_count[3], IOACCT_ATTR_ACCESS4_COUNT, 0),
};

/* An MPI-IO record: every field of struct ioacct_mpiio. */
#define QMPI(member, attr, flags) FIELD(struct ioacct_qmpiio_row, member, attr, flags)
static const struct field qmpiio_fields[] = {
	QMPI(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QMPI(m.step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	QMPI(m.rank, IOACCT_ATTR_TASK_RANK, F_REQUIRED),
	QMPI(m.part, IOACCT_ATTR_NODE_PART_INDEX, 0),
	QMPI(m.pid, IOACCT_ATTR_PID, 0),
	QMPI(m.path, IOACCT_ATTR_FILE_PATH, 0),
	QMPI(m.indep_opens, IOACCT_ATTR_INDEP_OPENS, 0),
	QMPI(m.coll_opens, IOACCT_ATTR_COLL_OPENS, 0),
	QMPI(m.indep_reads, IOACCT_ATTR_INDEP_READS, 0),
	QMPI(m.indep_writes, IOACCT_ATTR_INDEP_WRITES, 0),
	QMPI(m.coll_reads, IOACCT_ATTR_COLL_READS, 0),
	QMPI(m.coll_writes, IOACCT_ATTR_COLL_WRITES, 0),
	QMPI(m.split_reads, IOACCT_ATTR_SPLIT_READS, 0),
	QMPI(m.split_writes, IOACCT_ATTR_SPLIT_WRITES, 0),
	QMPI(m.nb_reads, IOACCT_ATTR_NB_READS, 0),
	QMPI(m.nb_writes, IOACCT_ATTR_NB_WRITES, 0),
	QMPI(m.syncs, IOACCT_ATTR_SYNCS, 0),
	QMPI(m.views, IOACCT_ATTR_VIEWS, 0),
	QMPI(m.bytes_read, IOACCT_ATTR_READ_BYTES, 0),
	QMPI(m.bytes_written, IOACCT_ATTR_WRITE_BYTES, 0),
	QMPI(m.unsized_reads, IOACCT_ATTR_UNSIZED_READS, 0),
	QMPI(m.unsized_writes, IOACCT_ATTR_UNSIZED_WRITES, 0),
	QMPI(m.read_ns, IOACCT_ATTR_READ_NS, 0),
	QMPI(m.write_ns, IOACCT_ATTR_WRITE_NS, 0),
	QMPI(m.meta_ns, IOACCT_ATTR_META_NS, 0),
	QMPI(m.size_read, IOACCT_ATTR_SIZE_READ, 0),
	QMPI(m.size_written, IOACCT_ATTR_SIZE_WRITTEN, 0),
};

/* An HDF5 record: every field of struct ioacct_h5rec. */
#define QH5(member, attr, flags) FIELD(struct ioacct_qh5_row, member, attr, flags)
static const struct field qh5_fields[] = {
	QH5(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QH5(h.step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	QH5(h.rank, IOACCT_ATTR_TASK_RANK, F_REQUIRED),
	QH5(h.part, IOACCT_ATTR_NODE_PART_INDEX, 0),
	QH5(h.pid, IOACCT_ATTR_PID, 0),
	QH5(h.kind, IOACCT_ATTR_H5_KIND, F_REQUIRED),
	QH5(h.name, IOACCT_ATTR_FILE_PATH, 0),
	QH5(h.opens, IOACCT_ATTR_OPENS, 0),
	QH5(h.flushes, IOACCT_ATTR_FLUSHES, 0),
	QH5(h.reads, IOACCT_ATTR_READS, 0),
	QH5(h.writes, IOACCT_ATTR_WRITES, 0),
	QH5(h.bytes_read, IOACCT_ATTR_READ_BYTES, 0),
	QH5(h.bytes_written, IOACCT_ATTR_WRITE_BYTES, 0),
	QH5(h.unsized_reads, IOACCT_ATTR_UNSIZED_READS, 0),
	QH5(h.unsized_writes, IOACCT_ATTR_UNSIZED_WRITES, 0),
	QH5(h.rw_switches, IOACCT_ATTR_RW_SWITCHES, 0),
	QH5(h.npoints_max, IOACCT_ATTR_NPOINTS_MAX, 0),
	QH5(h.datatype_size, IOACCT_ATTR_DATATYPE_SIZE, 0),
	QH5(h.read_ns, IOACCT_ATTR_READ_NS, 0),
	QH5(h.write_ns, IOACCT_ATTR_WRITE_NS, 0),
	QH5(h.meta_ns, IOACCT_ATTR_META_NS, 0),
	QH5(h.size_read, IOACCT_ATTR_SIZE_READ, 0),
	QH5(h.size_written, IOACCT_ATTR_SIZE_WRITTEN, 0),
	QH5(h.open_start_ns, IOACCT_ATTR_H5_OPEN_START_NS, 0),
	QH5(h.open_end_ns, IOACCT_ATTR_H5_OPEN_END_NS, 0),
	QH5(h.read_start_ns, IOACCT_ATTR_H5_READ_START_NS, 0),
	QH5(h.read_end_ns, IOACCT_ATTR_H5_READ_END_NS, 0),
	QH5(h.write_start_ns, IOACCT_ATTR_H5_WRITE_START_NS, 0),
	QH5(h.write_end_ns, IOACCT_ATTR_H5_WRITE_END_NS, 0),
	QH5(h.close_start_ns, IOACCT_ATTR_H5_CLOSE_START_NS, 0),
	QH5(h.close_end_ns, IOACCT_ATTR_H5_CLOSE_END_NS, 0),
	QH5(h.max_read_ns, IOACCT_ATTR_H5_MAX_READ_NS, 0),
	QH5(h.max_read_size, IOACCT_ATTR_H5_MAX_READ_SIZE, 0),
	QH5(h.max_write_ns, IOACCT_ATTR_H5_MAX_WRITE_NS, 0),
	QH5(h.max_write_size, IOACCT_ATTR_H5_MAX_WRITE_SIZE, 0),
	QH5(h.dataspace_ndims, IOACCT_ATTR_H5_DATASPACE_NDIMS, 0),
	QH5(h.dataspace_npoints, IOACCT_ATTR_H5_DATASPACE_NPOINTS, 0),
	QH5(h.use_mpiio, IOACCT_ATTR_H5_USE_MPIIO, 0),
	QH5(h.use_mpiio_collective, IOACCT_ATTR_H5_USE_MPIIO_COLLECTIVE, 0),
};

/* An RPC row (issue 40): every field of struct ioacct_rpc. */
#define QRPC(member, attr, flags) FIELD(struct ioacct_qrpc_row, member, attr, flags)
static const struct field qrpc_fields[] = {
	QRPC(job_key, IOACCT_ATTR_JOB_KEY, F_REQUIRED),
	QRPC(r.step_id, IOACCT_ATTR_STEP_ID, F_REQUIRED),
	MNT_FIELDS(QRPC, r.mnt_id, F_REQUIRED),
	QRPC(r.prog, IOACCT_ATTR_RPC_PROG, F_REQUIRED),
	QRPC(r.vers, IOACCT_ATTR_RPC_VERS, F_REQUIRED),
	QRPC(r.proc, IOACCT_ATTR_RPC_PROC, F_REQUIRED),
	QRPC(r.flags, IOACCT_ATTR_RPC_FLAGS, 0),
	QRPC(r.bin, IOACCT_ATTR_BIN, 0),
	QRPC(r.name, IOACCT_ATTR_RPC_NAME, 0),
	QRPC(r.calls, IOACCT_ATTR_CALLS, 0),
	QRPC(r.bytes_sent, IOACCT_ATTR_BYTES_SENT, 0),
	QRPC(r.bytes_recv, IOACCT_ATTR_BYTES_RECV, 0),
	QRPC(r.queue_ns, IOACCT_ATTR_QUEUE_NS, 0),
	QRPC(r.rtt_ns, IOACCT_ATTR_RTT_NS, 0),
	QRPC(r.execute_ns, IOACCT_ATTR_EXECUTE_NS, 0),
	QRPC(r.errors, IOACCT_ATTR_ERRORS, 0),
	QRPC(r.retrans, IOACCT_ATTR_RETRANS, 0),
};

#endif /* IOACCT_PROTO_ROWS_H */
