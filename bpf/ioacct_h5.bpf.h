/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HDF5 through uprobes (issue 39), part of ioacct_mpi.bpf.c (included at its
 * end: its task_slot(), slot_of(), count_in(), size_bin() and fnv1a()). The
 * daemon attaches these two programs to the HDF5 libraries the same library
 * watch finds, by offset, with each function's kind in the cookie
 * (ioacct_h5_abi.h): counters per (slot, process, file) and per (slot,
 * process, dataset) as Darshan's H5F and H5D modules keep them, records
 * named as Darshan names them ("FILE", "FILE:/DATASET").
 *
 * An id (hid_t) is what the application holds: h5ids says what each of a
 * process's ids stands for, from the calls that made it. The size of a
 * read or write is not in its arguments (ids of a dataspace and a
 * datatype): it is read, while that call of the thread is pending, at the
 * entry of the library's own H5D__read or H5D__write from its structures
 * (1.10's layouts, IOACCT_H5_K_DIO), or from the library's own functions
 * that the call makes (IOACCT_H5_K_NPOINTS and the two after it) on a
 * library whose code did not match; where they did not say, the call is
 * counted unsized.
 */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_h5_key);
	__type(value, struct ioacct_h5_val);
} h5recs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ioacct_h5_id_key);
	__type(value, struct ioacct_h5_id);
} h5ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);
	__type(value, struct ioacct_h5_pending);
} h5pend SEC(".maps");

/* Where a record and an id are built before they go into their maps. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_h5_val);
} h5valbuf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ioacct_h5_id);
} h5idbuf SEC(".maps");

/*
 * Where a name is built: twice a name's room, so that a string of up to a
 * name's length read at any offset below a name's length stays inside (the
 * verifier bounds the two apart); the first IOACCT_H5_NAME_MAX bytes are
 * the name.
 */
struct h5_namebuf {
	char s[2 * IOACCT_H5_NAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct h5_namebuf);
} h5names SEC(".maps");

#define H5_NAME_MASK (IOACCT_H5_NAME_MAX - 1)
#define H5_BUF_MASK (2 * IOACCT_H5_NAME_MAX - 1)

/* Appends the string at src (the task's memory when user) to buf at off; the new length. */
static __always_inline __u32 h5_cat(struct h5_namebuf *buf, __u32 off, const void *src, bool user)
{
	long n;

	if (off >= IOACCT_H5_NAME_MAX - 1)
		return off;
	/* The mask, kept (the compiler would drop it after the test): what the verifier bounds by. */
	asm volatile("" : "+r"(off));
	off &= H5_NAME_MASK;
	n = user ? bpf_probe_read_user_str(buf->s + off, IOACCT_H5_NAME_MAX, src) :
		   bpf_probe_read_kernel_str(buf->s + off, IOACCT_H5_NAME_MAX, src);
	return n > 0 ? off + (__u32)n - 1 : off;
}

/* Puts c at off (what followed is cut off); the new length. */
static __always_inline __u32 h5_chr(struct h5_namebuf *buf, __u32 off, char c)
{
	if (off >= IOACCT_H5_NAME_MAX - 1)
		return off;
	asm volatile("" : "+r"(off));
	buf->s[off & H5_BUF_MASK] = c;
	buf->s[(off + 1) & H5_BUF_MASK] = '\0';
	return off + 1;
}

/* The name built in buf, into name (cut to its room). */
static __always_inline void h5_name_put(char *name, const struct h5_namebuf *buf)
{
	bpf_probe_read_kernel(name, IOACCT_H5_NAME_MAX, buf->s);
	name[IOACCT_H5_NAME_MAX - 1] = '\0';
}

/*
 * The name of an object called uname (the task's string) at loc, into
 * out: "FILE:/uname" under a file, "FILE:/group/uname" under a group,
 * "FILE:uname" for an absolute uname. Its file's key too. -1 when loc is
 * an id these probes did not see made (opened before they were attached).
 */
static __noinline int h5_name(struct ioacct_h5_id *out, __u32 tgid, __s64 loc, __u64 uname)
{
	struct ioacct_h5_id_key lk = { .hid = loc, .tgid = tgid };
	struct ioacct_h5_id *l = bpf_map_lookup_elem(&h5ids, &lk);
	__u32 zero = 0, off;
	struct h5_namebuf *buf = bpf_map_lookup_elem(&h5names, &zero);
	char first = 0;

	if (!l || !buf)
		return -1;
	bpf_probe_read_user(&first, 1, (void *)uname);
	out->file = l->file;
	out->flen = l->flen;
	off = h5_cat(buf, 0, l->name, false);
	if (l->kind == IOACCT_H5_FILE || first == '/') {
		/* Under the file's root, or absolute: from the file's name on. */
		off = h5_chr(buf, l->flen, ':');
		if (first != '/')
			off = h5_chr(buf, off, '/');
	} else if (off > 0 && buf->s[(off - 1) & H5_BUF_MASK] != '/') {
		off = h5_chr(buf, off, '/');
	}
	h5_cat(buf, off, (void *)uname, true);
	h5_name_put(out->name, buf);
	return 0;
}

/*
 * The slot's record of key (made, named name, if new; one of an earlier
 * job in a reused slot is dropped), or NULL when the map is full.
 */
static __always_inline struct ioacct_h5_val *h5_rec(__u32 slot, __u32 tgid, __u64 key, __u32 kind,
						     const char *name)
{
	struct ioacct_h5_key k = { .slot = slot, .tgid = tgid, .name = key };
	struct ioacct_slot *sl = slot_of(slot);
	struct ioacct_h5_val *v;
	__u32 zero = 0;

	if (!sl)
		return NULL;
	v = bpf_map_lookup_elem(&h5recs, &k);
	if (v && v->start == sl->start_ns)
		return v;
	if (v)
		bpf_map_delete_elem(&h5recs, &k);
	v = bpf_map_lookup_elem(&h5valbuf, &zero);
	if (!v)
		return NULL;
	__builtin_memset(v, 0, sizeof(*v));
	v->start = sl->start_ns;
	v->kind = kind;
	bpf_probe_read_kernel_str(v->name, sizeof(v->name), name);
	if (bpf_map_update_elem(&h5recs, &k, v, BPF_NOEXIST) && !bpf_map_lookup_elem(&h5recs, &k)) {
		count_in(&lost, slot);
		return NULL;
	}
	return bpf_map_lookup_elem(&h5recs, &k);
}

/* What the id stands for; NULL when these probes did not see it made. */
static __always_inline struct ioacct_h5_id *h5_id(__u32 tgid, __s64 hid)
{
	struct ioacct_h5_id_key k = { .hid = hid, .tgid = tgid };

	return bpf_map_lookup_elem(&h5ids, &k);
}

static __always_inline void h5_id_put(__u32 slot, __u32 tgid, __s64 hid, const struct ioacct_h5_id *v)
{
	struct ioacct_h5_id_key k = { .hid = hid, .tgid = tgid };

	if (bpf_map_update_elem(&h5ids, &k, v, BPF_ANY))
		count_in(&lost, slot);
}

/* The record an id's calls go to: its own (a dataset), or its file's. */
static __always_inline struct ioacct_h5_val *h5_rec_of(__u32 slot, __u32 tgid, __u64 key)
{
	struct ioacct_h5_key k = { .slot = slot, .tgid = tgid, .name = key };

	return bpf_map_lookup_elem(&h5recs, &k);
}

/* A call from ts to end widens a span of calls (first start, last end; 0 none). */
static __always_inline void h5_span(__u64 *start, __u64 *end, __u64 ts, __u64 e)
{
	if (ts && (!*start || ts < *start))
		*start = ts;
	if (e > *end)
		*end = e;
}

/* The times of old (an anonymous dataset's record) into v's. */
static __always_inline void h5_times_add(struct ioacct_h5_val *v, const struct ioacct_h5_val *old)
{
	h5_span(&v->open_start, &v->open_end, old->open_start, old->open_end);
	h5_span(&v->read_start, &v->read_end, old->read_start, old->read_end);
	h5_span(&v->write_start, &v->write_end, old->write_start, old->write_end);
	h5_span(&v->close_start, &v->close_end, old->close_start, old->close_end);
	if (old->max_read_ns > v->max_read_ns) {
		v->max_read_ns = old->max_read_ns;
		v->max_read_size = old->max_read_size;
	}
	if (old->max_write_ns > v->max_write_ns) {
		v->max_write_ns = old->max_write_ns;
		v->max_write_size = old->max_write_size;
	}
	if (old->collective)
		v->collective = 1;
	if (old->ndims && !v->ndims) {
		v->ndims = old->ndims;
		v->npoints = old->npoints;
	}
	if (old->chunk_known && !v->chunk_known) {
		v->chunk_known = 1;
		for (__u32 i = 0; i < IOACCT_H5_CHUNK_DIMS; i++)
			v->chunk[i] = old->chunk[i];
	}
}

/*
 * H5S_get_simple_extent_dims returned rank rc, having written the dims
 * at the pending call's inner_arg: the dataspace's rank and elements (their
 * product), as H5Sget_simple_extent_ndims/_npoints would say. A rank of 0
 * (scalar or null: no dims to tell them apart) or a dims not read: not known.
 */
static __noinline int h5_dims(struct ioacct_h5_pending *p, __s64 rc)
{
	__u64 n = 1, d;

	if (rc <= 0 || rc > IOACCT_H5_MAX_RANK)
		return 0;
	for (__u32 i = 0; i < IOACCT_H5_MAX_RANK && i < rc; i++) {
		if (bpf_probe_read_user(&d, sizeof(d), (void *)(p->inner_arg + 8 * i)))
			return 0;
		n *= d;
	}
	p->ndims = (__u64)rc;
	p->npoints = n;
	p->have |= IOACCT_H5_HAVE_DIMS;
	return 0;
}

/*
 * H5D__chunk_set_info(dset) runs in a chunked dataset's create or open:
 * its chunk dims, where the cookie's layout (read from the library's code)
 * says, as H5Pget_chunk(dcpl, 5, dims) gives them to Darshan: the first 5
 * of the rank's, D1 the last of those. Unread: not known.
 */
static __noinline int h5_chunk(struct ioacct_h5_pending *p, __u64 dset, __u64 c)
{
	__u64 shared = 0;
	__u32 rank = 0, d, n;

	if (bpf_probe_read_user(&shared, sizeof(shared), (void *)(dset + IOACCT_H5_SHARED_OFF(c))) ||
	    bpf_probe_read_user(&rank, sizeof(rank), (void *)(shared + IOACCT_H5_RANK_OFF(c))) ||
	    rank == 0 || rank > IOACCT_H5_MAX_RANK)
		return 0;
	n = rank < IOACCT_H5_CHUNK_DIMS ? rank : IOACCT_H5_CHUNK_DIMS;
	for (__u32 i = 0; i < IOACCT_H5_CHUNK_DIMS; i++) {
		if (i >= n)
			break;
		if (bpf_probe_read_user(&d, sizeof(d),
					(void *)(shared + IOACCT_H5_DIMS_OFF(c) + 4 * (n - 1 - i))))
			return 0;
		p->chunk[i] = d;
	}
	p->have |= IOACCT_H5_HAVE_CHUNK;
	return 0;
}

/*
 * H5D__read or H5D__write(dset, mem type, ms, fs, buf) of 1.10 began, in
 * the pending H5Dread or H5Dwrite (whose cookie has the selection's
 * layout): what the three functions that it calls next would say, read
 * where the cookie's layout says (the library's own loads). As that code
 * does, a NULL file space is the dataset's own, a NULL memory space the
 * file's: the elements are the memory selection's (H5S_get_select_npoints
 * of it, which HDF5 requires equal to the file's), the datatype the
 * dataset's (H5T_path_find's dst of a write, src of a read), its size
 * H5T_get_size's. What could not be read leaves the call unsized.
 */
static __noinline int h5_dio(struct ioacct_h5_pending *p, __u64 dset, __u64 ms, __u64 fs, __u64 c)
{
	__u64 shared = 0, n = 0, type = 0, tsh = 0, size = 0;

	if (bpf_probe_read_user(&shared, sizeof(shared), (void *)(dset + IOACCT_H5_DIO_SHARED(c))) ||
	    (!fs && bpf_probe_read_user(&fs, sizeof(fs), (void *)(shared + IOACCT_H5_DIO_SPACE(c)))) ||
	    !fs)
		return 0;
	if (!ms)
		ms = fs;
	p->fspace = fs;
	p->selc = p->cookie;
	p->have |= IOACCT_H5_HAVE_FSPACE;
	if (bpf_probe_read_user(&n, sizeof(n), (void *)(ms + IOACCT_H5_DIO_NELEM(c))))
		return 0;
	p->npoints = n;
	p->have |= IOACCT_H5_HAVE_NPOINTS;
	if (bpf_probe_read_user(&type, sizeof(type), (void *)(shared + IOACCT_H5_DIO_TYPE(c))) ||
	    bpf_probe_read_user(&tsh, sizeof(tsh), (void *)(type + IOACCT_H5_DIO_TSHARED(c))) ||
	    bpf_probe_read_user(&size, sizeof(size), (void *)(tsh + IOACCT_H5_DIO_TSIZE(c))) || !size)
		return 0;
	p->dtype = type;
	p->tsize = size;
	p->have |= IOACCT_H5_HAVE_DTYPE | IOACCT_H5_HAVE_TSIZE;
	return 0;
}

/*
 * H5F_open of 1.10 returned f (not NULL), the file its H5Fcreate or
 * H5Fopen registers: its driver's feature flags, read where the cookie's
 * layout says (H5F_has_feature's loads, f->shared->lf->feature_flags), say
 * whether it is MPI-IO, as H5F_has_feature(f, H5FD_FEAT_HAS_MPI) would. A
 * nested H5F_open would return before the API call's own: the last return
 * is the file's. Not read: not known, left as H5F_has_feature unasked.
 */
static __noinline int h5_feat(struct ioacct_h5_pending *p, __u64 f, __u64 c)
{
	__u64 shared = 0, lf = 0;
	__u32 flags = 0;

	if (bpf_probe_read_user(&shared, sizeof(shared), (void *)(f + IOACCT_H5_FEAT_SHARED(c))) ||
	    bpf_probe_read_user(&lf, sizeof(lf), (void *)(shared + IOACCT_H5_FEAT_LF(c))) ||
	    bpf_probe_read_user(&flags, sizeof(flags), (void *)(lf + IOACCT_H5_FEAT_FLAGS(c))))
		return 0;
	p->have = (p->have & ~IOACCT_H5_HAVE_MPIO) | IOACCT_H5_HAVE_FEAT |
		  ((flags & IOACCT_H5_FEAT_HAS_MPI) ? IOACCT_H5_HAVE_MPIO : 0);
	return 0;
}

/*
 * A read's or write's file selection, as Darshan counts it
 * (H5Sget_select_type of the file space; a hyperslab regular when
 * H5Sis_regular_hyperslab says so): none for H5S_ALL (a[3] 0), the
 * dataspace's selection class's kind read where the cookie that gave its
 * H5S_t says (the library's own loads), a hyperslab's regularity from its
 * diminfo_valid at the call's return, after the call, as Darshan asks.
 * 1.10's H5Sis_regular_hyperslab rebuilds a diminfo still "not yet"
 * (H5S_DIMINFO_VALID_NO) to answer; a read or write of elements
 * rebuilds it first (its selection iterator's init), so that state is left
 * only where the call did not: not known then, as an unreadable kind.
 */
static __noinline int h5_select(struct ioacct_h5_val *v, const struct ioacct_h5_pending *p)
{
	__u64 c = p->selc, cls = 0, hs = 0;
	__u32 type = 0, dv = 0;

	if (!p->a[3])
		return 0;
	if (!(p->have & IOACCT_H5_HAVE_FSPACE) || !(c & IOACCT_H5_LAYOUT_OK) ||
	    bpf_probe_read_user(&cls, sizeof(cls), (void *)(p->fspace + IOACCT_H5_SEL_OFF(c))) ||
	    bpf_probe_read_user(&type, sizeof(type), (void *)(cls + IOACCT_H5_TYPE_OFF(c)))) {
		__sync_fetch_and_add(&v->sel_unknown, 1);
		return 0;
	}
	if (type == IOACCT_H5_SEL_POINTS) {
		__sync_fetch_and_add(&v->sel_points, 1);
		return 0;
	}
	if (type != IOACCT_H5_SEL_HYPERSLABS) {
		/* H5S_SEL_NONE, H5S_SEL_ALL: none of the three, as Darshan; else not known. */
		if (type > 3)
			__sync_fetch_and_add(&v->sel_unknown, 1);
		return 0;
	}
	if (bpf_probe_read_user(&hs, sizeof(hs), (void *)(p->fspace + IOACCT_H5_HSLAB_OFF(c))) ||
	    bpf_probe_read_user(&dv, sizeof(dv), (void *)(hs + IOACCT_H5_DV_OFF(c))))
		dv = IOACCT_H5_DIMINFO_NO;
	if (dv == IOACCT_H5_DIMINFO_YES)
		__sync_fetch_and_add(&v->sel_regular, 1);
	else if (dv == IOACCT_H5_DIMINFO_IMPOSSIBLE)
		__sync_fetch_and_add(&v->sel_irregular, 1);
	else
		__sync_fetch_and_add(&v->sel_unknown, 1);
	return 0;
}

/* H5Fcreate or H5Fopen returned the file's id. */
static __noinline int h5_fopen(const struct ioacct_h5_pending *p, __u32 tgid, __s64 hid, __u64 dt)
{
	struct ioacct_h5_id *id;
	struct ioacct_h5_val *v;
	__u32 zero = 0;
	long n;

	id = bpf_map_lookup_elem(&h5idbuf, &zero);
	if (!id)
		return 0;
	__builtin_memset(id, 0, sizeof(*id));
	n = bpf_probe_read_user_str(id->name, sizeof(id->name), (void *)p->a[0]);
	if (n <= 1)
		return 0;
	id->kind = IOACCT_H5_FILE;
	id->flen = (__u32)n - 1;
	id->rec = id->file = fnv1a(id->name);
	v = h5_rec(p->slot, tgid, id->rec, IOACCT_H5_FILE, id->name);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->opens, 1);
	__sync_fetch_and_add(&v->meta_ns, dt);
	h5_span(&v->open_start, &v->open_end, p->ts, p->ts + dt);
	/* As Darshan: the last open's driver. */
	v->mpiio = (p->have & IOACCT_H5_HAVE_MPIO) ? 1 : 0;
	h5_id_put(p->slot, tgid, hid, id);
	return 0;
}

/*
 * H5Gcreate2, H5Gopen2, H5Dcreate1/2, H5Dopen1/2 or H5Dcreate_anon returned
 * the object's id: a group is noted by its name; a dataset counts an open
 * in its record, an anonymous one in a record of its own until H5Olink
 * names it.
 */
static __noinline int h5_oopen(const struct ioacct_h5_pending *p, __u32 kind, __u32 tgid, __s64 hid,
			       __u64 dt)
{
	struct ioacct_h5_id *id;
	struct ioacct_h5_val *v;
	__u32 zero = 0;

	id = bpf_map_lookup_elem(&h5idbuf, &zero);
	if (!id)
		return 0;
	__builtin_memset(id, 0, sizeof(*id));
	if (kind == IOACCT_H5_K_DANON) {
		struct ioacct_h5_id *l = h5_id(tgid, (__s64)p->a[0]);

		if (!l)
			return 0;
		struct h5_namebuf *buf = bpf_map_lookup_elem(&h5names, &zero);

		if (!buf)
			return 0;
		id->file = l->file;
		id->flen = l->flen;
		h5_cat(buf, 0, l->name, false);
		/* Darshan has no name for it (nor a record): said anonymous, by its id until linked. */
		h5_cat(buf, h5_chr(buf, l->flen, ':'), "(anonymous)", false);
		h5_name_put(id->name, buf);
		id->anon = 1;
		id->rec = fnv1a(id->name) ^ (__u64)hid;
	} else {
		if (h5_name(id, tgid, (__s64)p->a[0], p->a[1]))
			return 0;
		id->rec = fnv1a(id->name);
	}
	if (kind == IOACCT_H5_K_GOPEN) {
		id->kind = IOACCT_H5_GROUP;
		id->rec = 0;
		h5_id_put(p->slot, tgid, hid, id);
		return 0;
	}
	id->kind = IOACCT_H5_DATASET;
	v = h5_rec(p->slot, tgid, id->rec, IOACCT_H5_DATASET, id->name);
	if (!v)
		return 0;
	if (p->have & IOACCT_H5_HAVE_DIMS) {
		v->ndims = p->ndims;
		v->npoints = p->npoints;
	}
	/* A library whose chunk probe reads right: without its call, not chunked. */
	v->chunk_known = (p->cookie & IOACCT_H5_CHUNK_OK) ? 1 : 0;
	for (__u32 i = 0; i < IOACCT_H5_CHUNK_DIMS; i++)
		v->chunk[i] = (p->have & IOACCT_H5_HAVE_CHUNK) ? p->chunk[i] : 0;
	__sync_fetch_and_add(&v->opens, 1);
	__sync_fetch_and_add(&v->meta_ns, dt);
	h5_span(&v->open_start, &v->open_end, p->ts, p->ts + dt);
	h5_id_put(p->slot, tgid, hid, id);
	return 0;
}

/*
 * H5Olink(object, loc, name) linked an anonymous dataset: its record takes
 * its name from now on (added to a record of that name, if one exists).
 */
static __noinline int h5_olink(const struct ioacct_h5_pending *p, __u32 tgid)
{
	struct ioacct_h5_id *id = h5_id(tgid, (__s64)p->a[0]), *nid;
	struct ioacct_h5_val *old, *v;
	__u32 zero = 0;
	__u64 *src, *dst;

	if (!id || id->kind != IOACCT_H5_DATASET || !id->anon)
		return 0;
	nid = bpf_map_lookup_elem(&h5idbuf, &zero);
	if (!nid)
		return 0;
	__builtin_memset(nid, 0, sizeof(*nid));
	if (h5_name(nid, tgid, (__s64)p->a[1], p->a[2]))
		return 0;
	nid->kind = IOACCT_H5_DATASET;
	nid->rec = fnv1a(nid->name);
	old = h5_rec_of(p->slot, tgid, id->rec);
	v = h5_rec(p->slot, tgid, nid->rec, IOACCT_H5_DATASET, nid->name);
	if (old && v && old != v) {
		/* The sums, opens to the size bins; the largest selection and the type's size. */
		src = &old->opens;
		dst = &v->opens;
		for (__u32 i = 0; i < (offsetof(struct ioacct_h5_val, name) -
				       offsetof(struct ioacct_h5_val, opens)) / 8; i++) {
			if (i == (offsetof(struct ioacct_h5_val, npoints_max) -
				  offsetof(struct ioacct_h5_val, opens)) / 8) {
				if (src[i] > dst[i])
					dst[i] = src[i];
			} else if (i == (offsetof(struct ioacct_h5_val, datatype_size) -
					 offsetof(struct ioacct_h5_val, opens)) / 8) {
				if (src[i])
					dst[i] = src[i];
			} else {
				__sync_fetch_and_add(&dst[i], src[i]);
			}
		}
		if (old->last)
			v->last = old->last;
		h5_times_add(v, old);
		struct ioacct_h5_key ok = { .slot = p->slot, .tgid = tgid, .name = id->rec };

		bpf_map_delete_elem(&h5recs, &ok);
	}
	if (v)
		h5_id_put(p->slot, tgid, (__s64)p->a[0], nid);
	return 0;
}

/* How h5_rw() counts a call (BPF functions take 5 arguments). */
#define H5_RW_READ 1   /* a read, else a write */
#define H5_RW_MULTI 2  /* a dataset of an H5Dread_multi or H5Dwrite_multi */
#define H5_RW_FSPACE 4 /* that dataset's file space not H5S_ALL */

/*
 * H5Dread or H5Dwrite succeeded: counted in dataset hid's record. A
 * dataset of an H5Dread_multi or H5Dwrite_multi (H5_RW_MULTI) is counted
 * unsized, its selection's kind none for H5S_ALL, else not known.
 */
static __noinline int h5_rw(const struct ioacct_h5_pending *p, __u32 how, __u32 tgid, __u64 dt,
			    __s64 hid)
{
	struct ioacct_h5_id *id = h5_id(tgid, hid);
	struct ioacct_h5_val *v;
	__u32 want = IOACCT_H5_HAVE_NPOINTS | IOACCT_H5_HAVE_TSIZE, b;
	bool rd = how & H5_RW_READ, sized = !(how & H5_RW_MULTI) && (p->have & want) == want;
	__u64 bytes = sized ? p->npoints * p->tsize : 0;

	if (!id || id->kind != IOACCT_H5_DATASET)
		return 0; /* opened before the probes were attached: not counted */
	v = h5_rec_of(p->slot, tgid, id->rec);
	if (!v)
		return 0;
	__sync_fetch_and_add(rd ? &v->reads : &v->writes, 1);
	__sync_fetch_and_add(rd ? &v->read_ns : &v->write_ns, dt);
	if (v->last && v->last != (rd ? 1 : 2))
		__sync_fetch_and_add(&v->rw_switches, 1);
	v->last = rd ? 1 : 2;
	if (p->have & IOACCT_H5_HAVE_MPIO)
		v->collective = 1;
	if (!(how & H5_RW_MULTI))
		h5_select(v, p);
	else if (how & H5_RW_FSPACE)
		__sync_fetch_and_add(&v->sel_unknown, 1);
	/* As Darshan: the first of the slowest calls, its bytes. */
	if (rd) {
		h5_span(&v->read_start, &v->read_end, p->ts, p->ts + dt);
		if (dt > v->max_read_ns) {
			v->max_read_ns = dt;
			v->max_read_size = bytes;
		}
	} else {
		h5_span(&v->write_start, &v->write_end, p->ts, p->ts + dt);
		if (dt > v->max_write_ns) {
			v->max_write_ns = dt;
			v->max_write_size = bytes;
		}
	}
	if (!sized) {
		__sync_fetch_and_add(rd ? &v->unsized_reads : &v->unsized_writes, 1);
		return 0;
	}
	v->datatype_size = p->tsize;
	if (p->npoints > v->npoints_max)
		v->npoints_max = p->npoints;
	__sync_fetch_and_add(rd ? &v->bytes_read : &v->bytes_written, bytes);
	b = size_bin(bytes);
	if (b < IOACCT_H5_NR_SIZE_BINS)
		__sync_fetch_and_add(rd ? &v->size_read[b] : &v->size_written[b], 1);
	return 0;
}

/*
 * H5Dread_multi or H5Dwrite_multi(count, dset ids, ..., file space ids,
 * ...) succeeded: each of its first IOACCT_H5_MULTI_MAX datasets counted
 * as one read or write of it, the call's time each (as Darshan times a
 * record's calls), unsized.
 */
static __noinline int h5_multi(const struct ioacct_h5_pending *p, bool rd, __u32 tgid, __u64 dt)
{
	__s64 hid = 0, fs = 0;

	for (__u32 i = 0; i < IOACCT_H5_MULTI_MAX && i < p->a[0]; i++) {
		if (bpf_probe_read_user(&hid, sizeof(hid), (void *)(p->a[1] + 8 * i)) ||
		    bpf_probe_read_user(&fs, sizeof(fs), (void *)(p->a[4] + 8 * i)))
			return 0;
		h5_rw(p, (rd ? H5_RW_READ : 0) | H5_RW_MULTI | (fs ? H5_RW_FSPACE : 0), tgid, dt, hid);
	}
	return 0;
}

/* H5Fflush, H5Fclose, H5Dflush, H5Dclose, H5Gclose: the file's or dataset's record, the id. */
static __noinline int h5_meta(const struct ioacct_h5_pending *p, __u32 kind, __u32 tgid, __u64 dt)
{
	struct ioacct_h5_id *id = h5_id(tgid, (__s64)p->a[0]);
	struct ioacct_h5_id_key k = { .hid = (__s64)p->a[0], .tgid = tgid };
	struct ioacct_h5_val *v;

	if (!id)
		return 0;
	/* H5Fflush takes any object of the file. */
	v = h5_rec_of(p->slot, tgid, kind == IOACCT_H5_K_FFLUSH ? id->file : id->rec);
	if (v && (kind != IOACCT_H5_K_CLOSE || id->kind == IOACCT_H5_DATASET)) {
		if (kind == IOACCT_H5_K_FFLUSH || kind == IOACCT_H5_K_DFLUSH)
			__sync_fetch_and_add(&v->flushes, 1);
		else if (kind == IOACCT_H5_K_FCLOSE || kind == IOACCT_H5_K_CLOSE)
			h5_span(&v->close_start, &v->close_end, p->ts, p->ts + dt);
		__sync_fetch_and_add(&v->meta_ns, dt);
	}
	if (kind == IOACCT_H5_K_FCLOSE || kind == IOACCT_H5_K_CLOSE)
		bpf_map_delete_elem(&h5ids, &k);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(ioacct_h5_enter)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	struct ioacct_h5_pending *p = bpf_map_lookup_elem(&h5pend, &id);
	struct ioacct_h5_pending n = {};
	__u32 kind = (cookie >> 8) & 0xff, io;
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx);

	/* Both read here: the context may not be read at an offset chosen by a branch. */
	asm volatile("" : "+r"(a0), "+r"(a1));
	if (kind >= IOACCT_H5_K_NPOINTS) {
		/* The library's own functions: only inside a read or write of the thread's. */
		if (!p || p->depth)
			return 0;
		io = (p->cookie >> 8) & 0xff;
		if (kind == IOACCT_H5_K_EXTDIMS) {
			/* A dataset's create or open: the first call with dims to write. */
			if ((io == IOACCT_H5_K_DOPEN || io == IOACCT_H5_K_DANON) && a1 &&
			    !(p->have & IOACCT_H5_HAVE_DIMS) && !p->inner) {
				p->inner = kind;
				p->inner_arg = a1;
			}
			return 0;
		}
		if (kind == IOACCT_H5_K_HASFEAT) {
			/* A file's create or open: the first question of HAS_MPI. */
			if (io == IOACCT_H5_K_FOPEN && a1 == IOACCT_H5_FEAT_HAS_MPI &&
			    !(p->have & IOACCT_H5_HAVE_FEAT) && !p->inner)
				p->inner = kind;
			return 0;
		}
		if (kind == IOACCT_H5_K_CHUNK) {
			/* A chunked dataset's create or open: its first call. */
			if ((io == IOACCT_H5_K_DOPEN || io == IOACCT_H5_K_DANON) &&
			    (cookie & IOACCT_H5_LAYOUT_OK) && !(p->have & IOACCT_H5_HAVE_CHUNK))
				h5_chunk(p, a0, cookie);
			return 0;
		}
		if (io != IOACCT_H5_K_DREAD && io != IOACCT_H5_K_DWRITE)
			return 0;
		if (kind == IOACCT_H5_K_DIO) {
			/* Its first call in the read or write (only one is). */
			if ((cookie & IOACCT_H5_LAYOUT_OK) && !(p->have & IOACCT_H5_HAVE_NPOINTS))
				h5_dio(p, a0, PT_REGS_PARM3(ctx), PT_REGS_PARM4(ctx), cookie);
			return 0;
		}
		if (kind == IOACCT_H5_K_NPOINTS) {
			/*
			 * H5D__read and H5D__write (1.10) ask the memory
			 * selection's size, then the file's: the second call's
			 * dataspace is the file's (the dataset's own for H5S_ALL).
			 */
			if ((p->have & IOACCT_H5_HAVE_NPOINTS) && !(p->have & IOACCT_H5_HAVE_FSPACE)) {
				p->fspace = a0;
				p->selc = cookie;
				p->have |= IOACCT_H5_HAVE_FSPACE;
			}
			return 0;
		}
		if (kind == IOACCT_H5_K_XFERMODE) {
			/* Its first call in the read or write: the mode it writes at a0. */
			if (a0 && !p->inner && !(p->have & IOACCT_H5_HAVE_FEAT)) {
				p->inner = kind;
				p->inner_arg = a0;
			}
			return 0;
		}
		if (kind == IOACCT_H5_K_TPATH && !(p->have & IOACCT_H5_HAVE_DTYPE)) {
			p->dtype = io == IOACCT_H5_K_DWRITE ? a1 : a0;
			p->have |= IOACCT_H5_HAVE_DTYPE;
		} else if (kind == IOACCT_H5_K_TSIZE && (p->have & IOACCT_H5_HAVE_DTYPE) &&
			   !(p->have & IOACCT_H5_HAVE_TSIZE) && a0 == p->dtype) {
			p->inner = kind;
		}
		return 0;
	}
	if (p) {
		p->depth++;
		return 0;
	}
	n.slot = task_slot();
	if (n.slot == IOACCT_SLOT_NONE)
		return 0;
	n.cookie = cookie;
	n.a[0] = a0;
	n.a[1] = a1;
	n.a[2] = PT_REGS_PARM3(ctx);
	n.a[3] = PT_REGS_PARM4(ctx);
	n.a[4] = PT_REGS_PARM5(ctx);
	n.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&h5pend, &id, &n, BPF_NOEXIST))
		count_in(&lost, n.slot);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ioacct_h5_return)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	struct ioacct_h5_pending *p = bpf_map_lookup_elem(&h5pend, &id);
	__u32 kind = (cookie >> 8) & 0xff, tgid = id >> 32;
	__s64 rc = (__s64)PT_REGS_RC(ctx);
	__u64 dt;

	if (!p)
		return 0;
	if (kind >= IOACCT_H5_K_NPOINTS) {
		if (p->depth)
			return 0;
		/* The first selection's size in the call: its memory's, equal to its file's. */
		if (kind == IOACCT_H5_K_NPOINTS && !(p->have & IOACCT_H5_HAVE_NPOINTS) && rc >= 0) {
			__u32 io = (p->cookie >> 8) & 0xff;

			if (io == IOACCT_H5_K_DREAD || io == IOACCT_H5_K_DWRITE) {
				p->npoints = (__u64)rc;
				p->have |= IOACCT_H5_HAVE_NPOINTS;
			}
		} else if (kind == IOACCT_H5_K_TSIZE && p->inner == kind) {
			p->inner = 0;
			if (rc > 0) {
				p->tsize = (__u64)rc;
				p->have |= IOACCT_H5_HAVE_TSIZE;
			}
		} else if (kind == IOACCT_H5_K_EXTDIMS && p->inner == kind) {
			p->inner = 0;
			h5_dims(p, (__s32)rc);
		} else if (kind == IOACCT_H5_K_FNEW) {
			/* A file's create or open: the file H5F_open made or found. */
			if (((p->cookie >> 8) & 0xff) == IOACCT_H5_K_FOPEN && rc &&
			    (cookie & IOACCT_H5_LAYOUT_OK))
				h5_feat(p, (__u64)rc, cookie);
		} else if (kind == IOACCT_H5_K_HASFEAT && p->inner == kind) {
			/* An hbool_t: only the low byte is set (setne %al). */
			p->inner = 0;
			p->have |= IOACCT_H5_HAVE_FEAT | ((__u8)rc ? IOACCT_H5_HAVE_MPIO : 0);
		} else if (kind == IOACCT_H5_K_XFERMODE && p->inner == kind) {
			__u32 mode = 0;

			p->inner = 0;
			if ((__s32)rc >= 0 &&
			    !bpf_probe_read_user(&mode, sizeof(mode), (void *)p->inner_arg)) {
				p->have |= IOACCT_H5_HAVE_FEAT;
				if (mode == IOACCT_H5_MPIO_COLLECTIVE)
					p->have |= IOACCT_H5_HAVE_MPIO;
			}
		}
		return 0;
	}
	if (p->depth) {
		p->depth--;
		return 0;
	}
	dt = bpf_ktime_get_ns() - p->ts;
	kind = (p->cookie >> 8) & 0xff;
	/* As Darshan, failed calls are not counted: hid_t results are 64 bits, herr_t 32. */
	switch (kind) {
	case IOACCT_H5_K_FOPEN:
		if (rc >= 0)
			h5_fopen(p, tgid, rc, dt);
		break;
	case IOACCT_H5_K_GOPEN:
	case IOACCT_H5_K_DOPEN:
	case IOACCT_H5_K_DANON:
		if (rc >= 0)
			h5_oopen(p, kind, tgid, rc, dt);
		break;
	case IOACCT_H5_K_OLINK:
		if ((__s32)rc >= 0)
			h5_olink(p, tgid);
		break;
	case IOACCT_H5_K_DREAD:
	case IOACCT_H5_K_DWRITE:
		if ((__s32)rc >= 0)
			h5_rw(p, kind == IOACCT_H5_K_DREAD ? H5_RW_READ : 0, tgid, dt, (__s64)p->a[0]);
		break;
	case IOACCT_H5_K_DREADM:
	case IOACCT_H5_K_DWRITEM:
		if ((__s32)rc >= 0)
			h5_multi(p, kind == IOACCT_H5_K_DREADM, tgid, dt);
		break;
	default:
		if ((__s32)rc >= 0)
			h5_meta(p, kind, tgid, dt);
	}
	bpf_map_delete_elem(&h5pend, &id);
	return 0;
}
