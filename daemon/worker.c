// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The core's side of the unprivileged workers: see worker.h. The worker's
 * side is wmain.c (and sandbox.c, its filter).
 *
 * A worker is started by fork() and execve() of /proc/self/exe: the same
 * build of ioacctd whatever a package upgrade put on disk since (the two
 * ends must agree on the wire and on struct ioacct_config), with a fresh
 * address space (nothing of the core's memory) and only the descriptors
 * it is meant to have. Between fork() and execve() the child makes only
 * system calls (the core has threads: nothing else is safe there), in an
 * order each needs: the capability bounding set emptied (CAP_SETPCAP) and
 * the groups, gid and uid set (CAP_SETGID, CAP_SETUID) while it is root;
 * then the ambient and inheritable sets cleared, NoNewPrivs, and the
 * parent's death signal (set after the uid change, which clears it).
 * Executed without file capabilities as a uid other than 0, it has none.
 */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "text.h"
#include "util.h"
#include "wchan.h"

#define MAX_FDS (WCHAN_MAX_FDS - 1) /* the configuration's memfd goes first */

struct ioacct_worker {
	char name[16];
	int fds[MAX_FDS];                /* given at each start, ours */
	size_t nfds;
	const struct ioacct_worker_ops *ops; /* NULL: a thread's */
	void *ctx;
	/* A call in progress holds it; the event loop's round only tries it. */
	pthread_mutex_t lock;
	struct ioacct_wchan ch;          /* fd -1: none */
	pid_t pid;                       /* 0: none (reaped) */
	bool ready;                      /* it answered w_init */
	bool failed;                     /* its first start failed: not started again */
	uint32_t init_seq;
	unsigned int starts;
	uint64_t started_ms, restart_ms, backoff_ms;
	struct ioacct_worker *next;
};

static struct {
	pthread_mutex_t lock;            /* the list */
	struct ioacct_worker *list;
	const struct ioacct_config *cfg;
	int epfd;                        /* the event loop's workers' channels */
	int cancel;                      /* an eventfd: readable once stopping */
	bool stopping;                   /* ioacct_workers_cancel() was called */
	int cap_last;                    /* /proc/sys/kernel/cap_last_cap */
} set = { .lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1, .cancel = -1, .cap_last = 63 };

static uint64_t now_ms(void)
{
	return ioacct_wchan_now_ms();
}

int ioacct_workers_init(const struct ioacct_config *cfg)
{
	char buf[16] = "";
	int fd;

	set.cfg = cfg;
	set.epfd = epoll_create1(EPOLL_CLOEXEC);
	set.cancel = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (set.epfd < 0 || set.cancel < 0)
		return -errno;
	fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0)
			set.cap_last = atoi(buf);
		close(fd);
	}
	return 0;
}

void ioacct_workers_fini(void)
{
	if (set.epfd >= 0)
		close(set.epfd);
	if (set.cancel >= 0)
		close(set.cancel);
	set.epfd = set.cancel = -1;
}

int ioacct_workers_fd(void)
{
	return set.epfd;
}

bool ioacct_workers_stopping(void)
{
	return __atomic_load_n(&set.stopping, __ATOMIC_ACQUIRE);
}

void ioacct_workers_cancel(void)
{
	uint64_t one = 1;

	__atomic_store_n(&set.stopping, true, __ATOMIC_RELEASE);
	if (set.cancel >= 0 && write(set.cancel, &one, sizeof(one)) < 0)
		log_warn("workers: cannot cancel their calls: %s", strerror(errno));
}

int ioacct_worker_memfd(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING), ret;
	const uint8_t *p = data;
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(fd, p + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		done += (size_t)n;
	}
	/* Sealed: what the worker reads is what was written, and it can change nothing. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		goto fail;
	return fd;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

/* ---- the child, between fork() and execve(): system calls only ---- */

/* Writes "ioacctd worker NAME: WHAT failed: errno N" to stderr and ends the child. */
static void __attribute__((noreturn)) child_fail(const char *name, const char *what)
{
	char num[16];
	int e = errno, i = (int)sizeof(num);
	ssize_t r __attribute__((unused));

	num[--i] = '\n';
	do
		num[--i] = (char)('0' + e % 10);
	while ((e /= 10) && i > 0);
	r = write(2, "ioacctd worker ", 15);
	r = write(2, name, strlen(name));
	r = write(2, ": ", 2);
	r = write(2, what, strlen(what));
	r = write(2, " failed: errno ", 15);
	r = write(2, num + i, sizeof(num) - (size_t)i);
	_exit(126);
}

/* Closes every descriptor from 4 on (close_range; /proc/self/fd on kernels before 5.9). */
static void child_close_from_4(const char *name)
{
	char buf[4096];
	int dfd, fds[256];
	long n;

	if (syscall(SYS_close_range, 4U, ~0U, 0) == 0)
		return;
	dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		child_fail(name, "open /proc/self/fd");
	for (;;) {
		size_t k = 0;

		lseek(dfd, 0, SEEK_SET);
		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n && k < 256;) {
				unsigned short reclen;
				const char *nm = buf + off + 19; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
				int fd = 0;

				memcpy(&reclen, buf + off + 16, sizeof(reclen));
				for (; *nm >= '0' && *nm <= '9'; nm++)
					fd = fd * 10 + (*nm - '0');
				if (!*nm && fd > 3 && fd != dfd)
					fds[k++] = fd;
				off += reclen;
			}
		}
		if (!k)
			break;
		for (size_t i = 0; i < k; i++)
			close(fds[i]);
	}
	close(dfd);
}

static void __attribute__((noreturn)) child_exec(const char *name, int chan, bool switch_uid,
						 uid_t uid, gid_t gid, pid_t parent,
						 char *const argv[])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2];

	if (dup2(chan, 3) < 0)
		child_fail(name, "dup2");
	child_close_from_4(name);
	/* Without CAP_SETPCAP (a core that is no longer root) the set stays as it is. */
	for (int c = 0; c <= set.cap_last; c++)
		prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	if (switch_uid) {
		if (setgroups(0, NULL))
			child_fail(name, "setgroups");
		if (setresgid(gid, gid, gid))
			child_fail(name, "setresgid");
		if (setresuid(uid, uid, uid))
			child_fail(name, "setresuid");
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		child_fail(name, "clearing the ambient capabilities");
	memset(none, 0, sizeof(none));
	if (syscall(SYS_capset, &hdr, none))
		child_fail(name, "capset");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		child_fail(name, "PR_SET_NO_NEW_PRIVS");
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		child_fail(name, "PR_SET_PDEATHSIG");
	/* The core died before the line above: nobody would ever stop this worker. */
	if (getppid() != parent)
		_exit(0);
	execve("/proc/self/exe", argv, environ);
	child_fail(name, "execve /proc/self/exe");
}

/* ---- the core's side ---- */

/* The workers' account when the core runs as root: `user`, or nobody with user = root. */
#define ROOT_CORE_ACCOUNT "nobody"

/*
 * The account the workers run as, when the core may switch to it: 0, or
 * -errno with err. A core that is no longer root (privs.c) runs them as
 * itself, its account; one that stays root (user = root) as nobody, never
 * as root.
 */
static int account(bool *switch_uid, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	static bool said;
	struct passwd pw, *res = NULL;
	const char *name = set.cfg->user;
	char buf[4096];
	int ret;

	*switch_uid = geteuid() == 0;
	*uid = geteuid();
	*gid = getegid();
	if (!*switch_uid)
		return 0;
	ret = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
	if (res && pw.pw_uid == 0) {
		name = ROOT_CORE_ACCOUNT;
		if (!said)
			log_warn("user = %s: ioacctd keeps root's rights, its workers run as %s",
				 set.cfg->user, name);
		said = true;
		res = NULL;
		ret = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
	}
	if (!res)
		return ioacct_seterr(err, errlen, ret ? -ret : -ENOENT,
				     "the account %s (ioacct.conf: user) %s: create it (useradd --system "
				     "--no-create-home --shell /usr/sbin/nologin %s) or name another",
				     name, ret ? strerror(ret) : "does not exist", name);
	if (pw.pw_uid == 0)
		return ioacct_seterr(err, errlen, -EPERM, "%s is uid 0: the workers must not run as root",
				     name);
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	return 0;
}

/* Its log line, in the core's log: the level it said, the text made safe. */
static void worker_log(void *ctx, const struct ioacct_req_worker *line)
{
	struct ioacct_worker *w = ctx;
	char clean[sizeof(line->text) * 4];
	uint32_t level = line->code <= IOACCT_LOG_DEBUG ? line->code : IOACCT_LOG_WARN;

	(void)w;
	ioacct_log((enum ioacct_log_level)level, "%s",
		   ioacct_text_clean(clean, sizeof(clean), line->text));
}

static int send_init(struct ioacct_worker *w, int cfgfd)
{
	struct ioacct_request req = { .type = IOACCT_MSG_W_INIT };
	struct ioacct_buf b = { 0 };
	int fds[WCHAN_MAX_FDS], ret;

	fds[0] = cfgfd;
	memcpy(fds + 1, w->fds, w->nfds * sizeof(int));
	ioacct_strlcpy(req.u.worker.text, w->name, sizeof(req.u.worker.text));
	req.seq = w->init_seq = ioacct_wchan_next_seq(&w->ch);
	ret = ioacct_proto_encode_request(&b, &req);
	if (!ret)
		ret = ioacct_wchan_queue(&w->ch, &b, fds, w->nfds + 1);
	ioacct_buf_free(&b);
	return ret;
}

/*
 * Closes the daemon's end of the channel, out of the epoll set first: a
 * close drops the registration only with the socket's last descriptor,
 * and a child forked meanwhile (the trace spooler) may hold a copy, whose
 * events would come with a worker freed by then.
 */
static void chan_close(struct ioacct_worker *w)
{
	if (w->ops && w->ch.fd >= 0)
		epoll_ctl(set.epfd, EPOLL_CTL_DEL, w->ch.fd, NULL);
	ioacct_wchan_close(&w->ch);
}

/* Forks and executes it, and sends its w_init. 0 or -errno with err. */
static int spawn(struct ioacct_worker *w, char *err, size_t errlen)
{
	char startno[16], *argv[] = { "ioacctd", IOACCT_WORKER_ARG, w->name, startno, NULL };
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };
	int sv[2] = { -1, -1 }, cfgfd, ret;
	bool switch_uid;
	pid_t parent = getpid(), pid;
	uid_t uid;
	gid_t gid;

	ret = account(&switch_uid, &uid, &gid, err, errlen);
	if (ret)
		return ret;
	cfgfd = ioacct_worker_memfd("ioacct-config", set.cfg, sizeof(*set.cfg));
	if (cfgfd < 0)
		return ioacct_seterr(err, errlen, cfgfd, "cannot pass the configuration: %s",
				     strerror(-cfgfd));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ret = ioacct_seterr(err, errlen, -errno, "socketpair: %s", strerror(errno));
		goto out;
	}
	snprintf(startno, sizeof(startno), "%u", w->starts + 1);
	pid = fork();
	if (pid == 0)
		child_exec(w->name, sv[1], switch_uid, uid, gid, parent, argv);
	if (pid < 0) {
		ret = ioacct_seterr(err, errlen, -errno, "fork: %s", strerror(errno));
		goto out;
	}
	close(sv[1]);
	sv[1] = -1;
	w->pid = pid;
	w->starts++;
	w->started_ms = now_ms();
	w->ready = false;
	ret = ioacct_wchan_init(&w->ch, sv[0]);
	if (!ret)
		sv[0] = -1;
	if (!ret && w->ops && epoll_ctl(set.epfd, EPOLL_CTL_ADD, w->ch.fd, &ev))
		ret = -errno;
	if (!ret)
		ret = send_init(w, cfgfd);
	if (ret) {
		ioacct_seterr(err, errlen, ret, "cannot talk to it: %s", strerror(-ret));
		chan_close(w);
		kill(pid, SIGKILL);
		goto out;
	}
	log_debug("worker %s started (pid %d, start %u)", w->name, (int)pid, w->starts);
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	close(cfgfd);
	return ret;
}

/* Its channel is of no more use (closed, or a call failed): the round kills and reaps it. */
static void lost(struct ioacct_worker *w)
{
	bool was_ready = w->ready;

	if (w->ch.fd < 0)
		return;
	chan_close(w);
	w->ready = false;
	if (w->ops && w->ops->down && was_ready)
		w->ops->down(w->ctx);
}

/* How it ended, said once, and when it starts again. */
static void reaped(struct ioacct_worker *w, int status)
{
	uint64_t up = now_ms() - w->started_ms;
	char how[128];

	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		snprintf(how, sizeof(how), "killed by SIGSYS: a system call outside its seccomp filter");
	else if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(status));
	w->backoff_ms = up >= IOACCT_WORKER_STABLE_MS || !w->backoff_ms ? IOACCT_WORKER_BACKOFF_MIN_MS :
			w->backoff_ms * 2 > IOACCT_WORKER_BACKOFF_MAX_MS ? IOACCT_WORKER_BACKOFF_MAX_MS :
			w->backoff_ms * 2;
	w->restart_ms = now_ms() + w->backoff_ms;
	log_warn("worker %s (pid %d) %s after %llu ms; starting it again in %llu s", w->name,
		 (int)w->pid, how, (unsigned long long)up,
		 (unsigned long long)(w->backoff_ms / 1000));
	w->pid = 0;
}

/* The w_init reply: ready, or why not (a setting it refuses). 0 or -errno with err. */
static int init_reply(struct ioacct_worker *w, const struct ioacct_reply *rep, char *err,
		      size_t errlen)
{
	if (rep->seq != w->init_seq)
		return ioacct_seterr(err, errlen, -EPROTO, "worker %s: reply %u before its start's",
				     w->name, rep->seq);
	if (rep->status)
		return ioacct_seterr(err, errlen, rep->status, "%s", rep->error);
	w->ready = true;
	log_debug("worker %s (pid %d) ready", w->name, (int)w->pid);
	return 0;
}

/*
 * A message of an event-loop worker: 0, or -errno when the worker is to
 * be dropped (it said something out of place).
 */
static int loop_message(struct ioacct_worker *w)
{
	uint16_t type = ioacct_wchan_type(&w->ch);
	struct ioacct_request *req = NULL;
	struct ioacct_reply rep;
	char why[512];
	int ret;

	if (type == IOACCT_MSG_REPLY) {
		ret = ioacct_proto_decode_reply(w->ch.in.data, w->ch.in.len, &rep, why, sizeof(why));
		if (ret) {
			log_warn("worker %s: bad reply: %s", w->name, why);
			return ret;
		}
		if (!w->ready) {
			ret = init_reply(w, &rep, why, sizeof(why));
			if (ret)
				log_err("worker %s cannot start: %s", w->name, why);
			else if (w->ops->ready)
				w->ops->ready(w->ctx);
		} else if (w->ops->reply) {
			w->ops->reply(w->ctx, &rep);
			ret = 0;
		}
		ioacct_reply_free(&rep);
		return ret;
	}
	req = malloc(sizeof(*req));
	if (!req)
		return -ENOMEM;
	ret = ioacct_proto_decode_request(w->ch.in.data, w->ch.in.len, req, why, sizeof(why));
	if (!ret && req->type == IOACCT_MSG_W_LOG)
		worker_log(w, &req->u.worker);
	else if (!ret)
		ret = -EPROTO;
	if (ret)
		log_warn("worker %s: a message out of place (%s)", w->name,
			 ret == -EPROTO ? ioacct_msg_type_name(type) : why);
	free(req);
	return ret;
}

/* Reads and handles what an event-loop worker sent; a broken channel drops it. */
static void loop_read(struct ioacct_worker *w)
{
	char why[512];
	int ret = 0;

	for (int n = 0; n < 64 && w->ch.fd >= 0; n++) {
		ret = ioacct_wchan_recv(&w->ch, 0, -1, why, sizeof(why));
		if (ret <= 0)
			break;
		ret = loop_message(w);
		ioacct_wchan_done(&w->ch);
		if (ret)
			break;
	}
	if (!ret && w->ch.fd >= 0)
		ret = ioacct_wchan_flush(&w->ch);
	if (ret < 0) {
		if (ret != -ECONNRESET)
			log_debug("worker %s: channel dropped: %s", w->name, why);
		lost(w);
	}
}

/* One worker's part of the round; under its lock. */
static void tick_one(struct ioacct_worker *w)
{
	char err[512];
	int status;

	if (w->ops && w->ch.fd >= 0)
		loop_read(w);
	if (w->pid && waitpid(w->pid, &status, WNOHANG) == w->pid) {
		lost(w);
		reaped(w, status);
	} else if (w->pid && w->ch.fd < 0) {
		/* Its channel is closed (a failed call, a bad message): it goes, and comes back. */
		kill(w->pid, SIGKILL);
	}
	if (!w->pid && !w->failed && w->starts && now_ms() >= w->restart_ms) {
		if (spawn(w, err, sizeof(err))) {
			log_err("worker %s cannot start: %s", w->name, err);
			w->backoff_ms = IOACCT_WORKER_BACKOFF_MAX_MS;
			w->restart_ms = now_ms() + w->backoff_ms;
		}
	}
}

void ioacct_workers_tick(void)
{
	pthread_mutex_lock(&set.lock);
	for (struct ioacct_worker *w = set.list; w; w = w->next) {
		if (pthread_mutex_trylock(&w->lock))
			continue; /* a call holds it: the next round */
		tick_one(w);
		pthread_mutex_unlock(&w->lock);
	}
	pthread_mutex_unlock(&set.lock);
}

struct ioacct_worker *ioacct_worker_new(const char *name, const int *fds, size_t nfds,
					const struct ioacct_worker_ops *ops, void *ctx)
{
	struct ioacct_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	if (nfds > MAX_FDS) {
		free(w);
		errno = EINVAL;
		return NULL;
	}
	ioacct_strlcpy(w->name, name, sizeof(w->name));
	w->ch.fd = -1;
	for (; w->nfds < nfds; w->nfds++) {
		w->fds[w->nfds] = fcntl(fds[w->nfds], F_DUPFD_CLOEXEC, 3);
		if (w->fds[w->nfds] < 0) {
			int e = errno;

			while (w->nfds)
				close(w->fds[--w->nfds]);
			free(w);
			errno = e;
			return NULL;
		}
	}
	w->ops = ops;
	w->ctx = ctx;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_lock(&set.lock);
	w->next = set.list;
	set.list = w;
	pthread_mutex_unlock(&set.lock);
	return w;
}

/* Waits for its w_init reply until deadline_ms (a thread's worker, or the first start). */
static int wait_ready(struct ioacct_worker *w, uint64_t deadline_ms, char *err, size_t errlen)
{
	struct ioacct_request *req = NULL;
	struct ioacct_reply rep;
	char why[512];
	int ret;

	while (!w->ready) {
		ret = ioacct_wchan_flush(&w->ch);
		if (!ret)
			ret = ioacct_wchan_recv(&w->ch, deadline_ms, set.cancel, why, sizeof(why));
		if (ret == 0)
			return ioacct_seterr(err, errlen, -ETIMEDOUT, "worker %s: not ready in time",
					     w->name);
		if (ret < 0)
			return ioacct_seterr(err, errlen, ret, "worker %s ended before it was ready: %s",
					     w->name, why);
		if (ioacct_wchan_type(&w->ch) == IOACCT_MSG_REPLY) {
			ret = ioacct_proto_decode_reply(w->ch.in.data, w->ch.in.len, &rep, why,
							sizeof(why));
			if (!ret) {
				ret = init_reply(w, &rep, err, errlen);
				ioacct_reply_free(&rep);
			} else {
				ioacct_seterr(err, errlen, ret, "worker %s: %s", w->name, why);
			}
		} else {
			req = req ? req : malloc(sizeof(*req));
			ret = !req ? -ENOMEM :
			      ioacct_proto_decode_request(w->ch.in.data, w->ch.in.len, req, why, sizeof(why));
			if (!ret && req->type == IOACCT_MSG_W_LOG)
				worker_log(w, &req->u.worker);
			else
				ret = ioacct_seterr(err, errlen, ret ? ret : -EPROTO,
						    "worker %s: a message out of place", w->name);
		}
		ioacct_wchan_done(&w->ch);
		if (ret)
			break;
	}
	free(req);
	return w->ready ? 0 : ret;
}

int ioacct_worker_start(struct ioacct_worker *w, int wait_ms, char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&w->lock);
	ret = spawn(w, err, errlen);
	if (!ret && wait_ms > 0) {
		ret = wait_ready(w, now_ms() + (uint64_t)wait_ms, err, errlen);
		if (ret) {
			lost(w);
			w->failed = true;
		} else if (w->ops && w->ops->ready) {
			w->ops->ready(w->ctx);
		}
	}
	if (ret && !w->pid)
		w->failed = true;
	pthread_mutex_unlock(&w->lock);
	return ret;
}

pid_t ioacct_worker_pid(const struct ioacct_worker *w)
{
	return w ? w->pid : 0;
}

void ioacct_worker_free(struct ioacct_worker *w)
{
	struct ioacct_worker **pp;
	uint64_t deadline;
	int status;

	if (!w)
		return;
	pthread_mutex_lock(&set.lock);
	for (pp = &set.list; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	pthread_mutex_unlock(&set.lock);
	pthread_mutex_lock(&w->lock);
	/* Its end of the channel closes: a worker reading it ends. */
	chan_close(w);
	deadline = now_ms() + IOACCT_WORKER_STOP_MS;
	while (w->pid && waitpid(w->pid, &status, WNOHANG) == 0) {
		if (now_ms() >= deadline) {
			log_info("worker %s (pid %d) did not end within %d ms of its channel's close: killed",
				 w->name, (int)w->pid, IOACCT_WORKER_STOP_MS);
			kill(w->pid, SIGKILL);
			waitpid(w->pid, &status, 0);
			break;
		}
		usleep(10000);
	}
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_destroy(&w->lock);
	for (size_t i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	free(w);
}

int ioacct_worker_send(struct ioacct_worker *w, struct ioacct_request *req, const int *fds,
		       size_t nfds, uint32_t *seq)
{
	struct ioacct_buf b = { 0 };
	int ret;

	if (w->ch.fd < 0 || !w->ready)
		return -ENOTCONN;
	req->seq = ioacct_wchan_next_seq(&w->ch);
	ret = ioacct_proto_encode_request(&b, req);
	if (!ret)
		ret = ioacct_wchan_queue(&w->ch, &b, fds, nfds);
	ioacct_buf_free(&b);
	if (ret && ret != -EAGAIN)
		lost(w);
	if (!ret && seq)
		*seq = req->seq;
	return ret;
}

int ioacct_worker_call(struct ioacct_worker *w, struct ioacct_request *req, const int *fds,
		       size_t nfds, struct ioacct_reply *rep, ioacct_worker_serve_fn serve,
		       void *ctx, int timeout_ms, char *err, size_t errlen)
{
	/* The channel's deadlines are absolute; UINT64_MAX: none (0 would be "do not wait"). */
	uint64_t deadline = timeout_ms > 0 ? now_ms() + (uint64_t)timeout_ms : UINT64_MAX;
	char why[512];
	int ret;

	memset(rep, 0, sizeof(*rep));
	pthread_mutex_lock(&w->lock);
	if (w->ch.fd < 0) {
		ret = ioacct_seterr(err, errlen, -ENOTCONN, "worker %s is not running%s", w->name,
				    w->failed ? "" : " (it is started again shortly)");
		goto out;
	}
	ret = wait_ready(w, deadline, err, errlen);
	if (!ret) {
		ret = ioacct_wchan_call(&w->ch, req, fds, nfds, rep, serve, ctx, worker_log, w,
					deadline, set.cancel, why, sizeof(why));
		/* Cancelled: only ever at the stop (ioacct_workers_cancel()). */
		if (ret)
			ioacct_seterr(err, errlen, ret, "worker %s: %s", w->name,
				      ret == -ECANCELED ? "ioacctd is stopping" : why);
	}
	if (ret)
		lost(w);
out:
	pthread_mutex_unlock(&w->lock);
	return ret;
}
