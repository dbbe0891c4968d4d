// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vmlinux's and some modules' BTF merged into one (rpcbtf.h). A module's
 * BTF is split over vmlinux's: its types are numbered after vmlinux's and
 * refer to both. Appended after vmlinux's whole, each module's types move
 * by how many types came before them; their references to vmlinux's stay.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "rpcbtf.h"

bool ioacct_rpcbtf_bpf_readable(void)
{
	__u32 id = 0;

	return bpf_btf_get_next_id(0, &id) == 0 || errno != EPERM;
}

/* Moves each type id of t that is a module's (>= first) by off. */
static void remap_ids(struct btf_type *t, __u32 first, __u32 off)
{
#define MOVE(id) do { if ((id) >= first) (id) += off; } while (0)
	__u16 n = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_PTR:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
	case BTF_KIND_TYPE_TAG:
		MOVE(t->type);
		break;
	case BTF_KIND_ARRAY:
		MOVE(btf_array(t)->type);
		MOVE(btf_array(t)->index_type);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (__u16 i = 0; i < n; i++)
			MOVE(btf_members(t)[i].type);
		break;
	case BTF_KIND_FUNC_PROTO:
		MOVE(t->type);
		for (__u16 i = 0; i < n; i++)
			MOVE(btf_params(t)[i].type);
		break;
	case BTF_KIND_DATASEC:
		for (__u16 i = 0; i < n; i++)
			MOVE(btf_var_secinfos(t)[i].type);
		break;
	default: /* INT, ENUM, ENUM64, FWD, FLOAT: no type ids */
		break;
	}
#undef MOVE
}

/* Appends module's types (split over vmlinux's) to out. */
static int add_module(struct btf *out, const struct btf *vmlinux, const char *module)
{
	__u32 first = btf__type_cnt(vmlinux), off = btf__type_cnt(out) - first;
	struct btf *mod = btf__load_module_btf(module, (struct btf *)vmlinux);
	int ret = 0;

	if (!mod)
		return -errno;
	for (__u32 id = first; id < btf__type_cnt(mod) && !ret; id++) {
		int nid = btf__add_type(out, mod, btf__type_by_id(mod, id));

		if (nid < 0)
			ret = nid;
		else
			remap_ids((struct btf_type *)btf__type_by_id(out, (__u32)nid), first, off);
	}
	btf__free(mod);
	return ret;
}

/* out's raw BTF in a memory file: its descriptor, or -errno. */
static int to_memfd(const struct btf *out)
{
	__u32 size = 0;
	const char *raw = btf__raw_data(out, &size);
	int fd = memfd_create("ioacct-rpc-btf", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0 || !raw) {
		int ret = raw ? -errno : -ENOMEM;

		if (fd >= 0)
			close(fd);
		return ret;
	}
	while (done < size) {
		ssize_t n = write(fd, raw + done, size - done);

		if (n < 0) {
			int ret = -errno;

			close(fd);
			return ret;
		}
		done += (size_t)n;
	}
	return fd;
}

int ioacct_rpcbtf_merge(const char *const *modules, char *path, size_t len)
{
	struct btf *vmlinux = btf__load_vmlinux_btf(), *out = NULL;
	char sys[128];
	int ret;

	if (!vmlinux)
		return -errno;
	out = btf__new_empty();
	ret = out ? btf__add_btf(out, vmlinux) : -errno;
	for (size_t i = 0; ret >= 0 && modules[i]; i++) {
		snprintf(sys, sizeof(sys), "/sys/kernel/btf/%s", modules[i]);
		if (access(sys, R_OK) == 0)
			ret = add_module(out, vmlinux, modules[i]);
	}
	if (ret >= 0)
		ret = to_memfd(out);
	if (ret >= 0)
		snprintf(path, len, "/proc/self/fd/%d", ret);
	btf__free(out);
	btf__free(vmlinux);
	return ret;
}
