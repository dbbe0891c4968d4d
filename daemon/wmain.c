// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ioacctd --worker NAME START: a worker's life (worker.h). Started by the
 * core only: descriptor 3 is its channel, and it runs as the account the
 * core switched to, without capabilities. It makes sure of that before
 * anything else, reads its w_init (the configuration, its descriptors),
 * sets up what it serves, confines what it may open by name (Landlock)
 * and loads its filter, says it is ready, then serves
 * the core's requests until the channel ends.
 */
#include "wmain.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "util.h"
#include "wside.h"

/* The core sends w_init at once; this is for a machine loaded beyond reason. */
#define INIT_WAIT_MS 60000

static const struct ioacct_worker_kind *const kinds[] = {
	&ioacct_worker_metrics,
	&ioacct_worker_pg,
	&ioacct_worker_otlp,
	&ioacct_worker_elf,
};

static const struct ioacct_worker_kind *kind_of(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kinds[i]->name, name))
			return kinds[i];
	return NULL;
}

bool ioacct_worker_known(const char *name)
{
	return kind_of(name) != NULL;
}

/*
 * The process is what the core made it: not root, no capability in any
 * set (CapBnd may keep what a core without CAP_SETPCAP could not drop),
 * NoNewPrivs. 0, or a line on stderr and -EPERM.
 */
static int unprivileged(const char *name)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct caps[2];
	uid_t r, e, s;

	if (getresuid(&r, &e, &s) || !r || !e || !s) {
		fprintf(stderr, "ioacctd worker %s: runs as root: refused\n", name);
		return -EPERM;
	}
	if (syscall(SYS_capget, &hdr, caps) || caps[0].effective || caps[0].permitted ||
	    caps[0].inheritable || caps[1].effective || caps[1].permitted || caps[1].inheritable) {
		fprintf(stderr, "ioacctd worker %s: holds capabilities: refused\n", name);
		return -EPERM;
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		fprintf(stderr, "ioacctd worker %s: NoNewPrivs is not set: refused\n", name);
		return -EPERM;
	}
	return 0;
}

/* Reads w_init: the configuration into ws->cfg; its other descriptors stay in ws->ch. */
static int read_init(struct ioacct_wside *ws, uint32_t *seq, char *err, size_t errlen)
{
	struct ioacct_request *req = malloc(sizeof(*req));
	char *cfg = NULL;
	int ret, fd;

	if (!req)
		return ioacct_seterr(err, errlen, -ENOMEM, "out of memory");
	ret = ioacct_wchan_recv(&ws->ch, ioacct_wchan_now_ms() + INIT_WAIT_MS, -1, err, errlen);
	if (ret == 0)
		ret = ioacct_seterr(err, errlen, -ETIMEDOUT, "no w_init from the core");
	if (ret == 1)
		ret = ioacct_proto_decode_request(ws->ch.in.data, ws->ch.in.len, req, err, errlen);
	if (!ret && (req->type != IOACCT_MSG_W_INIT || strcmp(req->u.worker.text, ws->name)))
		ret = ioacct_seterr(err, errlen, -EPROTO, "the first message is not this worker's w_init");
	if (!ret) {
		*seq = req->seq;
		fd = ioacct_wchan_take_fd(&ws->ch, 0);
		ret = fd < 0 ? -EPROTO : ioacct_wside_read_memfd(fd, sizeof(ws->cfg), &cfg);
		if (fd >= 0)
			close(fd);
		if (ret)
			ioacct_seterr(err, errlen, ret, "the configuration did not come whole");
		else
			memcpy(&ws->cfg, cfg, sizeof(ws->cfg));
	}
	free(cfg);
	free(req);
	return ret;
}

/*
 * A fault for the tests (crash.h): IOACCT_CRASH_AT=worker-syscall, or
 * worker-syscall-NAME, makes the worker's first start call acct(2) once
 * ready, which no filter allows: the kernel must kill it, the core must
 * say so and start it again.
 */
static void crash_point(const struct ioacct_wside *ws, const struct ioacct_worker_kind *k)
{
	const char *at = getenv("IOACCT_CRASH_AT");
	char mine[64];
	int fd;

	snprintf(mine, sizeof(mine), "worker-syscall-%s", ws->name);
	if (at && ws->start == 1 && (!strcmp(at, "worker-syscall") || !strcmp(at, mine))) {
		log_warn("IOACCT_CRASH_AT=%s: a system call outside the filter (fault injection)", at);
		syscall(SYS_acct, NULL);
	}
	/*
	 * IOACCT_CRASH_AT=worker-open-store, or worker-open-store-NAME: a
	 * worker that may open files tries the store, which its uid owns, as
	 * an exploit would; Landlock must refuse it (EACCES). Said either way.
	 */
	snprintf(mine, sizeof(mine), "worker-open-store-%s", ws->name);
	if (at && (!strcmp(at, "worker-open-store") || !strcmp(at, mine)) &&
	    (k->groups & IOACCT_SB_READ_FILES)) {
		fd = open(ws->cfg.db_path, O_RDONLY | O_CLOEXEC);
		log_warn("IOACCT_CRASH_AT=%s: worker %s: the store %s opened for reading: %s (fault injection)",
			 at, ws->name, ws->cfg.db_path, fd >= 0 ? "done" : strerror(errno));
		if (fd >= 0)
			close(fd);
	}
}

/*
 * Landlock's rules: the kind's files, then the rules in force. A kernel
 * without Landlock is said once per worker (its seccomp filter still holds).
 */
static int confine_fs(const struct ioacct_wside *ws, const struct ioacct_worker_kind *k, char *err,
		      size_t errlen)
{
	static struct ioacct_sb_files files;
	int ret = 0;

	files.n = files.used = 0;
	if (k->files && (k->groups & IOACCT_SB_READ_FILES))
		ret = k->files(ws, &files);
	if (ret)
		return ioacct_seterr(err, errlen, ret, "too many files to read, or names too long");
	ret = ioacct_sandbox_landlock(k->groups, &files, err, errlen);
	if (ret == 1 && ws->start == 1)
		log_info("%s", err);
	return ret == 1 ? 0 : ret;
}

/*
 * The descriptors of the message read, from the first one on, taken out
 * of the channel (which may then read the next: a request's serving may
 * call the core); how many.
 */
static size_t take_fds(struct ioacct_wside *ws, size_t first, int *fds)
{
	size_t n = 0;

	for (size_t i = first; i < ws->ch.nfds; i++)
		fds[n++] = ioacct_wchan_take_fd(&ws->ch, i);
	return n;
}

static void close_fds(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Serves the core's requests until the channel ends: 0, or -errno when it broke. */
static int serve(struct ioacct_wside *ws, const struct ioacct_worker_kind *k)
{
	struct ioacct_request *req = malloc(sizeof(*req));
	struct ioacct_reply rep;
	int fds[WCHAN_MAX_FDS];
	char err[512];
	size_t nfds;
	int ret;

	if (!req)
		return -ENOMEM;
	for (;;) {
		ret = ioacct_wchan_recv(&ws->ch, UINT64_MAX, -1, err, sizeof(err));
		if (ret < 0)
			break;
		ret = ioacct_proto_decode_request(ws->ch.in.data, ws->ch.in.len, req, err, sizeof(err));
		if (ret) {
			log_err("a bad message from the core: %s", err);
			break;
		}
		nfds = take_fds(ws, 0, fds);
		ioacct_wchan_done(&ws->ch);
		memset(&rep, 0, sizeof(rep));
		ret = k->serve(ws, req, fds, nfds, &rep);
		close_fds(fds, nfds);
		if (ret == 0) {
			rep.seq = req->seq;
			ret = ioacct_wchan_reply(&ws->ch, &rep, 0, -1);
		} else {
			ret = 0;
		}
		ioacct_reply_free(&rep);
		if (ret)
			break;
	}
	free(req);
	return ret == -ECONNRESET ? 0 : ret;
}

int ioacct_worker_main(int argc, char **argv)
{
	static struct ioacct_wside ws;
	const struct ioacct_worker_kind *k = argc == 4 ? kind_of(argv[2]) : NULL;
	struct ioacct_reply rep = { 0 };
	struct stat st;
	sigset_t none;
	char err[512] = "";
	int fds[WCHAN_MAX_FDS];
	char comm[16];
	uint32_t seq = 0;
	size_t nfds;
	int ret;

	if (!k || fstat(3, &st) || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "ioacctd %s: for ioacctd's own use (it starts its workers so)\n",
			IOACCT_WORKER_ARG);
		return 2;
	}
	/* Not for another process of this account to read or trace. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* Its name in ps and in the kernel's audit lines, rather than "exe". */
	snprintf(comm, sizeof(comm), "ioacctd-%s", k->name);
	prctl(PR_SET_NAME, comm, 0, 0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (unprivileged(k->name))
		return 1;
	ws.name = k->name;
	ws.start = (unsigned int)strtoul(argv[3], NULL, 10);
	if (ioacct_wchan_init(&ws.ch, 3))
		return 1;
	ioacct_log_set_ident("ioacctd");
	ioacct_log_set_sink(ioacct_wside_log_sink, &ws);
	ret = read_init(&ws, &seq, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "ioacctd worker %s: %s\n", k->name, err);
		return 1;
	}
	ioacct_log_set_level((enum ioacct_log_level)ws.cfg.log_level);
	/* The time zone read now: glibc opens /etc/localtime once, and the filter allows no open after. */
	tzset();
	nfds = take_fds(&ws, 1, fds);
	ioacct_wchan_done(&ws.ch);
	ret = k->init(&ws, fds, nfds, err, sizeof(err));
	close_fds(fds, nfds);
	if (!ret)
		ret = confine_fs(&ws, k, err, sizeof(err));
	if (!ret)
		ret = ioacct_sandbox_load(k->groups, err, sizeof(err));
	rep.seq = seq;
	if (ret)
		ioacct_reply_error(&rep, ret, "%s", err);
	if (ioacct_wchan_reply(&ws.ch, &rep, 0, -1) || ret) {
		if (k->fini)
			k->fini(&ws);
		return 1;
	}
	crash_point(&ws, k);
	ret = serve(&ws, k);
	if (k->fini)
		k->fini(&ws);
	ioacct_wchan_close(&ws.ch);
	return ret ? 1 : 0;
}
