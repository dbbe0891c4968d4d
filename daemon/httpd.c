// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * /metrics' HTTP server: see httpd.h. libmicrohttpd runs the requests in
 * its own thread; the sweeper, a thread of ours, closes the connections
 * that take too long; both only ever copy the page under its lock.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "httpd.h"

#ifdef HAVE_MHD
#include <arpa/inet.h>
#include <crypt.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ratelimit.h"
#include "text.h"
#include "util.h"

/*
 * Connections for everyone but metrics_priority's addresses, and for one
 * address among them: a flood from one host cannot take every slot.
 */
#define MAX_CONNECTIONS 256
#define MAX_PER_ADDRESS 16
/* Reserved for metrics_priority's addresses: Prometheus gets in whatever the others hold. */
#define PRIORITY_CONNECTIONS 16
/* Seconds a connection that makes no progress is kept (libmicrohttpd's timeout is an idle one). */
#define CONNECTION_TIMEOUT_S 10
/*
 * The whole time a client has to send its request, however it trickles
 * the bytes in, and to take the answer; the sweeper thread closes what
 * takes longer, every SWEEP_MS.
 */
#define REQUEST_BUDGET_MS 5000
#define RESPONSE_BUDGET_MS 60000
#define SWEEP_MS 250

/* Bounds of what metrics_auth_file and the TLS files may hold. */
#define AUTH_FILE_MAX (64 * 1024)
#define AUTH_USERS_MAX 64
#define PEM_FILE_MAX (1024 * 1024)

/*
 * The most a hash of metrics_auth_file may cost: one check runs in the
 * server thread, and SIGTERM waits for it. Each is about 0.1 to 0.5 s of a
 * core; the defaults of mkpasswd and openssl passwd are far below.
 */
#define SHA_CRYPT_ROUNDS_MAX 500000
#define BCRYPT_COST_MAX 12
#define YESCRYPT_MEM_MAX (64u << 20)  /* 128 * N * r bytes */

/*
 * Failed logins: an address gets THROTTLE_FREE_FAILS, then is answered 429
 * without a hash for 1 s, doubled at each further failure up to
 * THROTTLE_MAX_MS; an address quiet for THROTTLE_FORGET_MS starts afresh.
 * And whatever the addresses, the server thread hashes for others than
 * metrics_priority at most HASH_BUDGET_NS of each second.
 */
#define THROTTLE_SLOTS 256
#define THROTTLE_FREE_FAILS 5
#define THROTTLE_MAX_MS 60000
#define THROTTLE_FORGET_MS 600000
#define HASH_BUDGET_NS (200 * 1000000ull)

/* Log lines about clients: at most LOG_BURST per LOG_WINDOW_MS and kind. */
#define LOG_BURST 10
#define LOG_WINDOW_MS 60000
enum log_kind {
	LOG_MHD,      /* libmicrohttpd's own messages */
	LOG_SLOW,     /* connections closed by the sweeper */
	LOG_LOGIN,    /* addresses throttled after failed logins */
};

struct cred {
	char *user;
	char *hash;                  /* crypt(3): $y$ (yescrypt), $2b$ (bcrypt), $6$ (SHA-512) */
};

/* An open connection: what the limits count and the sweeper watches. */
struct mconn {
	struct in6_addr addr;        /* v4-mapped for IPv4 */
	bool priority;               /* from an address of metrics_priority */
	bool answering;              /* its request arrived: the answer is on its way */
	bool shut;                   /* the sweeper shut it down */
	int fd;                      /* our duplicate of its socket, for shutdown() */
	uint64_t since_ms;           /* when its request (or its answer) began */
	struct mconn *prev, *next;
};

struct throttle {
	struct in6_addr addr;
	uint32_t fails;
	uint64_t last_ms;            /* last failure; 0: a free slot */
	uint64_t until_ms;           /* answered 429 until then */
};

struct ioacct_httpd {
	const struct ioacct_config *cfg;
	struct ioacct_page *page;    /* what is served (metrics.c's) */
	struct MHD_Daemon *mhd;
	char *tls_cert, *tls_key;    /* PEM, read at start: libmicrohttpd wants them in memory */
	struct cred *creds;          /* metrics_auth_file; none: no authentication */
	size_t ncreds;
	struct in6_addr priority[IOACCT_ADDRS_MAX]; /* metrics_priority, v4-mapped for IPv4 */
	size_t npriority;
	/* The open connections, for the limits and the sweeper; under conn_lock. */
	pthread_mutex_t conn_lock;
	pthread_cond_t conn_cond;    /* wakes the sweeper to stop */
	struct mconn *conns;
	unsigned int nothers, nprio;
	bool stopping;
	pthread_t sweeper;
	bool sweeping;
	/* libmicrohttpd's messages and ours about clients, rate-limited; under log_lock. */
	pthread_mutex_t log_lock;
	struct ioacct_ratelimit log_rl;
	/* Failed logins by address and the time spent hashing; the server thread's alone. */
	struct throttle *throttle;
	uint64_t hash_window_ms, hash_window_ns;
};

static uint64_t now_ms(void)
{
	return ioacct_mono_ns() / 1000000;
}

static void log_report(uint32_t key, uint64_t suppressed, uint64_t window_ms, void *ctx)
{
	static const char *const what[] = {
		[LOG_MHD] = "messages of libmicrohttpd",
		[LOG_SLOW] = "closed slow connections",
		[LOG_LOGIN] = "throttled addresses",
	};

	(void)ctx;
	log_warn("metrics: %llu more %s not logged in %llu s", (unsigned long long)suppressed,
		 key < sizeof(what) / sizeof(what[0]) ? what[key] : "messages",
		 (unsigned long long)(window_ms / 1000));
}

/*
 * One line about clients, unless its kind had LOG_BURST lines in this window:
 * whatever a client does, it costs the log a few lines a minute.
 */
__attribute__((format(printf, 3, 0)))
static void log_client(struct ioacct_httpd *m, enum log_kind kind, const char *fmt, va_list ap)
{
	char msg[512], clean[512];
	bool allow;

	pthread_mutex_lock(&m->log_lock);
	allow = ioacct_ratelimit_allow(&m->log_rl, kind, now_ms(), log_report, NULL);
	pthread_mutex_unlock(&m->log_lock);
	if (!allow)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	/* libmicrohttpd may quote what a client sent. */
	log_warn("metrics: %s", ioacct_text_clean(clean, sizeof(clean), msg));
}

__attribute__((format(printf, 3, 4)))
static void log_clientf(struct ioacct_httpd *m, enum log_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_client(m, kind, fmt, ap);
	va_end(ap);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	log_client(cls, LOG_MHD, fmt, ap);
}

/* A client's address as IPv6, v4-mapped for IPv4; false for another family. */
static bool addr_of(const struct sockaddr *sa, struct in6_addr *out)
{
	if (sa && sa->sa_family == AF_INET6) {
		*out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
		return true;
	}
	if (sa && sa->sa_family == AF_INET) {
		memset(out, 0, sizeof(*out));
		out->s6_addr[10] = 0xff;
		out->s6_addr[11] = 0xff;
		memcpy(&out->s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return true;
	}
	return false;
}

static const char *addr_str(const struct in6_addr *a, char *buf, size_t len)
{
	if (IN6_IS_ADDR_V4MAPPED(a))
		return inet_ntop(AF_INET, &a->s6_addr[12], buf, (socklen_t)len);
	return inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

static bool is_priority(const struct ioacct_httpd *m, const struct in6_addr *a)
{
	for (size_t i = 0; i < m->npriority; i++)
		if (IN6_ARE_ADDR_EQUAL(&m->priority[i], a))
			return true;
	return false;
}

/* An address's slot of failures, or NULL. In the server thread only, like all of m->throttle. */
static struct throttle *throttle_find(struct ioacct_httpd *m, const struct in6_addr *a)
{
	for (size_t i = 0; i < THROTTLE_SLOTS; i++)
		if (m->throttle[i].last_ms && IN6_ARE_ADDR_EQUAL(&m->throttle[i].addr, a))
			return &m->throttle[i];
	return NULL;
}

/* Whether an address is refused for its failed logins now; *retry_s: for how long. */
static bool throttled(struct ioacct_httpd *m, const struct in6_addr *a, uint64_t now,
		      unsigned int *retry_s)
{
	struct throttle *t = throttle_find(m, a);

	if (!t || now >= t->until_ms)
		return false;
	if (retry_s)
		*retry_s = (unsigned int)((t->until_ms - now + 999) / 1000);
	return true;
}

/*
 * Before libmicrohttpd takes a connection: metrics_priority's addresses
 * have slots of their own, the others share MAX_CONNECTIONS with at most
 * MAX_PER_ADDRESS each. A refused connection is closed at once.
 */
static enum MHD_Result admit(void *cls, const struct sockaddr *sa, socklen_t salen)
{
	struct ioacct_httpd *m = cls;
	struct in6_addr a;
	unsigned int same = 0;
	bool ok;

	(void)salen;
	if (!addr_of(sa, &a))
		return MHD_NO;
	/*
	 * An address throttled after failed logins is not even read: a guesser
	 * on a kept-alive connection would cost a parse and an answer per guess.
	 */
	if (throttled(m, &a, now_ms(), NULL))
		return MHD_NO;
	pthread_mutex_lock(&m->conn_lock);
	if (is_priority(m, &a)) {
		ok = m->nprio < PRIORITY_CONNECTIONS;
	} else {
		for (struct mconn *c = m->conns; c; c = c->next)
			same += IN6_ARE_ADDR_EQUAL(&c->addr, &a);
		ok = m->nothers < MAX_CONNECTIONS && same < MAX_PER_ADDRESS;
	}
	pthread_mutex_unlock(&m->conn_lock);
	return ok ? MHD_YES : MHD_NO;
}

/* A connection opens or closes: the list the limits and the sweeper read. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct ioacct_httpd *m = cls;
	struct mconn *c = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci;

		c = calloc(1, sizeof(*c));
		if (!c)
			return;
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (ci)
			addr_of(ci->client_addr, &c->addr);
		/*
		 * Our own descriptor of the socket: the sweeper may shut it down
		 * from its thread even as libmicrohttpd closes its own.
		 */
		ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		c->fd = ci ? fcntl(ci->connect_fd, F_DUPFD_CLOEXEC, 0) : -1;
		c->priority = is_priority(m, &c->addr);
		c->since_ms = now_ms();
		pthread_mutex_lock(&m->conn_lock);
		c->next = m->conns;
		if (m->conns)
			m->conns->prev = c;
		m->conns = c;
		if (c->priority)
			m->nprio++;
		else
			m->nothers++;
		pthread_mutex_unlock(&m->conn_lock);
		*socket_context = c;
		return;
	}
	if (!c)
		return;
	pthread_mutex_lock(&m->conn_lock);
	if (c->prev)
		c->prev->next = c->next;
	else
		m->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->priority)
		m->nprio--;
	else
		m->nothers--;
	pthread_mutex_unlock(&m->conn_lock);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	*socket_context = NULL;
}

static struct mconn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/* A connection's state changes: it has its answer, or waits for its next request. */
static void conn_mark(struct ioacct_httpd *m, struct mconn *c, bool answering)
{
	if (!c)
		return;
	pthread_mutex_lock(&m->conn_lock);
	c->answering = answering;
	c->since_ms = now_ms();
	pthread_mutex_unlock(&m->conn_lock);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)req_cls;
	(void)toe;
	/* Keep-alive: the next request has its own budget from now. */
	conn_mark(cls, conn_of(conn), false);
}

/*
 * The sweeper: libmicrohttpd's timeout restarts with every byte, so a client
 * that sends a header line every few seconds would keep its slot forever.
 * Here each request has REQUEST_BUDGET_MS in all to arrive: past it, the
 * socket is shut down and libmicrohttpd closes the connection.
 */
static void *sweep(void *arg)
{
	struct ioacct_httpd *m = arg;
	struct timespec ts;

	pthread_mutex_lock(&m->conn_lock);
	while (!m->stopping) {
		uint64_t now = now_ms();
		unsigned int shut = 0;

		for (struct mconn *c = m->conns; c; c = c->next) {
			uint64_t budget = c->answering ? RESPONSE_BUDGET_MS : REQUEST_BUDGET_MS;

			if (c->shut || c->fd < 0 || now - c->since_ms < budget)
				continue;
			shutdown(c->fd, SHUT_RDWR);
			c->shut = true;
			shut++;
		}
		pthread_mutex_unlock(&m->conn_lock);
		if (shut)
			log_clientf(m, LOG_SLOW, "closed %u connections that did not send their "
				    "request within %d s or take their answer within %d s", shut,
				    REQUEST_BUDGET_MS / 1000, RESPONSE_BUDGET_MS / 1000);
		pthread_mutex_lock(&m->log_lock);
		ioacct_ratelimit_flush(&m->log_rl, now, log_report, NULL);
		pthread_mutex_unlock(&m->log_lock);
		pthread_mutex_lock(&m->conn_lock);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += SWEEP_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!m->stopping)
			pthread_cond_timedwait(&m->conn_cond, &m->conn_lock, &ts);
	}
	pthread_mutex_unlock(&m->conn_lock);
	return NULL;
}

/*
 * A whole small regular file, NUL-terminated, from the descriptor the core
 * opened it as (mserver.c; the worker may not open it); -errno, -EFBIG
 * beyond max bytes, -ESPIPE when not a regular file. The descriptor is
 * closed (*pfd -1).
 */
static int read_small_fd(int *pfd, size_t max, char **out)
{
	int fd = *pfd;
	struct stat st;
	char *buf = NULL;
	FILE *f;
	size_t n;
	int ret = 0;

	*pfd = -1;
	if (fd < 0)
		return -EBADF;
	/*
	 * From its start: the core's copy of the descriptor shares the offset,
	 * and the worker started before this one read the file to its end.
	 */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -ESPIPE;
	}
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	buf = malloc(max + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	n = fread(buf, 1, max + 1, f);
	if (ferror(f))
		ret = -EIO;
	else if (n > max)
		ret = -EFBIG;
	else if (memchr(buf, '\0', n))
		ret = -EINVAL;
	buf[n <= max ? n : max] = '\0';
out:
	fclose(f);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

static const char *file_errmsg(int ret, const char *big)
{
	return ret == -EFBIG ? big : ret == -EINVAL ? "NUL byte in the file" :
	       ret == -ESPIPE ? "not a regular file" : strerror(-ret);
}

/* The value of a character of crypt's base 64, or -1. */
static int crypt64(char ch)
{
	static const char a[] = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	const char *p = ch ? strchr(a, ch) : NULL;

	return p ? (int)(p - a) : -1;
}

/*
 * Whether a hash's settings keep one check within the bounds above: 0, or
 * -EINVAL with why. The methods whose cost its settings give, only.
 */
static int hash_cost_check(const char *h, char *why, size_t len)
{
	const char *p;

	if (!strncmp(h, "$y$", 3) || !strncmp(h, "$gy$", 4)) {
		/* $y$ flavor N r $: one character each up to 47 (yescrypt's encode64_uint32). */
		int fl, nl, r;

		p = h + (h[1] == 'y' ? 3 : 4);
		fl = crypt64(p[0]);
		nl = crypt64(p[1]);
		r = crypt64(p[2]);
		if (fl < 0 || fl > 47 || nl < 0 || nl > 30 || r < 0 || r > 47 || p[3] != '$') {
			snprintf(why, len, "yescrypt with parameters other than N and r, or too "
				 "large ones (mkpasswd -m yescrypt makes usable ones)");
			return -EINVAL;
		}
		if (128ull * (uint64_t)(r + 1) << (nl + 1) > YESCRYPT_MEM_MAX) {
			snprintf(why, len, "yescrypt with N = 2^%d and r = %d costs %llu MiB a check, "
				 "more than %u (mkpasswd -m yescrypt -R 7 or less)", nl + 1, r + 1,
				 (unsigned long long)((128ull * (uint64_t)(r + 1) << (nl + 1)) >> 20),
				 YESCRYPT_MEM_MAX >> 20);
			return -EINVAL;
		}
		return 0;
	}
	if (!strncmp(h, "$2a$", 4) || !strncmp(h, "$2b$", 4) || !strncmp(h, "$2y$", 4)) {
		int cost = (h[4] - '0') * 10 + (h[5] - '0');

		if (cost > BCRYPT_COST_MAX) {
			snprintf(why, len, "bcrypt cost %d is above %d", cost, BCRYPT_COST_MAX);
			return -EINVAL;
		}
		return 0;
	}
	if (!strncmp(h, "$5$", 3) || !strncmp(h, "$6$", 3)) {
		unsigned long long rounds = 5000;

		if (!strncmp(h + 3, "rounds=", 7)) {
			rounds = 0;
			for (p = h + 10; *p >= '0' && *p <= '9' && rounds <= SHA_CRYPT_ROUNDS_MAX; p++)
				rounds = rounds * 10 + (unsigned long long)(*p - '0');
		}
		if (rounds > SHA_CRYPT_ROUNDS_MAX) {
			snprintf(why, len, "%s rounds above %d: one check would hold the server for "
				 "seconds or more", h[1] == '5' ? "SHA-256" : "SHA-512",
				 SHA_CRYPT_ROUNDS_MAX);
			return -EINVAL;
		}
		return 0;
	}
	snprintf(why, len, "not yescrypt, bcrypt or SHA-crypt, the methods whose cost ioacctd can "
		 "bound");
	return -EINVAL;
}

/*
 * A line's hash, before the server runs: of a method crypt(3) here supports,
 * at a bounded cost, and one that crypt(3) reproduces (a cut or mistyped
 * hash would never match, and nobody would know why).
 */
static int hash_check(const char *hash, char *why, size_t len)
{
	struct crypt_data *cd;
	const char *h;
	int ret = 0;

	if (crypt_checksalt(hash) != CRYPT_SALT_OK) {
		snprintf(why, len, "crypt(3) here cannot verify it, or its method is too weak to use");
		return -EINVAL;
	}
	ret = hash_cost_check(hash, why, len);
	if (ret)
		return ret;
	cd = calloc(1, sizeof(*cd));
	if (!cd) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	h = crypt_r("", hash, cd);
	if (!h || h[0] == '*' || strlen(h) != strlen(hash) ||
	    strncmp(h, hash, (size_t)(strrchr(hash, '$') - hash))) {
		snprintf(why, len, "crypt(3) here cannot verify it (cut or malformed?)");
		ret = -EINVAL;
	}
	free(cd);
	return ret;
}

/* metrics_auth_file (opened as fd): "user:hash" lines; '#' lines and blank lines are skipped. */
static int load_creds(struct ioacct_httpd *m, const char *path, int *fd, char *err, size_t errlen)
{
	char *text = NULL, *line, why[256];
	unsigned int lineno = 0;
	int ret;

	ret = read_small_fd(fd, AUTH_FILE_MAX, &text);
	if (ret) {
		snprintf(err, errlen, "metrics_auth_file %s: %s", path,
			 file_errmsg(ret, "larger than 64 KiB"));
		return ret;
	}
	/* strsep, not strtok: empty lines count, so that messages give the right line. */
	for (char *p = text; (line = strsep(&p, "\n"));) {
		char *colon, *hash;
		struct cred *nc;

		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (line[0] == '\0' || line[0] == '#')
			continue;
		colon = strchr(line, ':');
		hash = colon ? colon + 1 : NULL;
		if (!colon || colon == line || hash[0] != '$' || strchr(hash, ':')) {
			snprintf(err, errlen, "metrics_auth_file %s:%u: not \"user:hash\" with a "
				 "crypt(3) hash (make one with: mkpasswd -m yescrypt, or "
				 "openssl passwd -6)", path, lineno);
			ret = -EINVAL;
			goto out;
		}
		if (m->ncreds == AUTH_USERS_MAX) {
			snprintf(err, errlen, "metrics_auth_file %s:%u: more than %d users", path,
				 lineno, AUTH_USERS_MAX);
			ret = -EINVAL;
			goto out;
		}
		ret = hash_check(hash, why, sizeof(why));
		if (ret) {
			snprintf(err, errlen, "metrics_auth_file %s:%u: the hash is refused: %s", path,
				 lineno, why);
			goto out;
		}
		*colon = '\0';
		nc = realloc(m->creds, (m->ncreds + 1) * sizeof(*nc));
		if (!nc) {
			ret = -ENOMEM;
			snprintf(err, errlen, "metrics_auth_file: out of memory");
			goto out;
		}
		m->creds = nc;
		nc[m->ncreds].user = strdup(line);
		nc[m->ncreds].hash = strdup(hash);
		m->ncreds++;
		if (!nc[m->ncreds - 1].user || !nc[m->ncreds - 1].hash) {
			ret = -ENOMEM;
			snprintf(err, errlen, "metrics_auth_file: out of memory");
			goto out;
		}
	}
	if (m->ncreds == 0) {
		snprintf(err, errlen, "metrics_auth_file %s: no \"user:hash\" line; an empty file "
			 "would let nobody in", path);
		ret = -EINVAL;
	}
out:
	free(text);
	return ret;
}

/* Equal strings, in a time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	for (size_t i = 0; i < la && i < lb; i++)
		d |= (unsigned char)(a[i] ^ b[i]);
	return d == 0;
}

/* An address's failures: its slot, or the one to reuse (free, else the longest quiet). */
static struct throttle *throttle_get(struct ioacct_httpd *m, const struct in6_addr *a,
				     uint64_t now)
{
	struct throttle *old = &m->throttle[0];

	for (size_t i = 0; i < THROTTLE_SLOTS; i++) {
		struct throttle *t = &m->throttle[i];

		if (t->last_ms && now - t->last_ms >= THROTTLE_FORGET_MS)
			memset(t, 0, sizeof(*t));
		if (t->last_ms && IN6_ARE_ADDR_EQUAL(&t->addr, a))
			return t;
		if (t->last_ms < old->last_ms)
			old = t;
	}
	memset(old, 0, sizeof(*old));
	old->addr = *a;
	return old;
}

enum auth { AUTH_OK, AUTH_FAIL, AUTH_WAIT };

/*
 * Whether the request's basic credentials match a line of metrics_auth_file;
 * AUTH_WAIT, without a hash, while its address is throttled or the others
 * used up the second's hashing time. *retry_s: when to come back.
 */
static enum auth authorize(struct ioacct_httpd *m, struct MHD_Connection *conn,
			   const struct mconn *mc, unsigned int *retry_s)
{
	struct in6_addr any = IN6ADDR_ANY_INIT;
	const struct in6_addr *a = mc ? &mc->addr : &any;
	bool priority = mc && mc->priority;
	uint64_t now = now_ms(), t0;
	struct throttle *t = NULL;
	struct crypt_data *cd;
	char *pass = NULL, *user;
	const struct cred *c = NULL;
	enum auth ok = AUTH_FAIL;

	user = MHD_basic_auth_get_username_password(conn, &pass);
	/* No credentials: the client's first try, before it knows it must log in. */
	if (!user || !pass)
		goto out;
	if (throttled(m, a, now, retry_s)) {
		ok = AUTH_WAIT;
		goto out;
	}
	if (now - m->hash_window_ms >= 1000) {
		m->hash_window_ms = now;
		m->hash_window_ns = 0;
	}
	if (!priority && m->hash_window_ns >= HASH_BUDGET_NS) {
		*retry_s = 1;
		ok = AUTH_WAIT;
		goto out;
	}
	for (size_t i = 0; i < m->ncreds && !c; i++)
		if (strcmp(m->creds[i].user, user) == 0)
			c = &m->creds[i];
	cd = calloc(1, sizeof(*cd));
	if (cd) {
		/* An unknown user costs a hash too: the timing does not tell who exists. */
		const char *hash = c ? c->hash : m->creds[0].hash;
		const char *h;

		t0 = ioacct_mono_ns();
		h = crypt_r(pass, hash, cd);
		m->hash_window_ns += ioacct_mono_ns() - t0;
		ok = c && h && h[0] != '*' && same_secret(h, hash) ? AUTH_OK : AUTH_FAIL;
		free(cd);
	}
	if (ok == AUTH_OK) {
		t = throttle_find(m, a);
		if (t)
			memset(t, 0, sizeof(*t));
		goto out;
	}
	t = throttle_get(m, a, now);
	t->last_ms = now;
	if (++t->fails >= THROTTLE_FREE_FAILS) {
		uint32_t k = t->fails - THROTTLE_FREE_FAILS;
		uint64_t wait = k >= 16 ? THROTTLE_MAX_MS : 1000ull << k;
		char as[INET6_ADDRSTRLEN];

		if (wait > THROTTLE_MAX_MS)
			wait = THROTTLE_MAX_MS;
		t->until_ms = now + wait;
		log_clientf(m, LOG_LOGIN, "%u failed logins from %s; its next ones are refused for "
			    "%llu s", t->fails, addr_str(a, as, sizeof(as)),
			    (unsigned long long)(wait / 1000));
	}
out:
	if (user)
		MHD_free(user);
	if (pass)
		MHD_free(pass);
	return ok;
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned int status, char *body,
			       size_t len, const char *type)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result respond_text(struct MHD_Connection *conn, unsigned int status,
				    const char *msg)
{
	char *body = strdup(msg);

	if (!body)
		return MHD_NO;
	return respond(conn, status, body, strlen(body), "text/plain; charset=utf-8");
}

static enum MHD_Result respond_auth(struct MHD_Connection *conn, enum auth a,
				    unsigned int retry_s)
{
	static const char fail_msg[] = "ioacctd: authentication required (metrics_auth_file)\n";
	static const char wait_msg[] = "ioacctd: too many failed logins from this address, or "
				       "too many at once; try again later\n";
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char retry[16];

	if (a == AUTH_FAIL) {
		resp = MHD_create_response_from_buffer(sizeof(fail_msg) - 1, (void *)fail_msg,
						       MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		ret = MHD_queue_basic_auth_fail_response(conn, "ioacct", resp);
		MHD_destroy_response(resp);
		return ret;
	}
	resp = MHD_create_response_from_buffer(sizeof(wait_msg) - 1, (void *)wait_msg,
					       MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	snprintf(retry, sizeof(retry), "%u", retry_s);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	/* Its next connections are refused at once while it waits: see admit(). */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	ret = MHD_queue_response(conn, MHD_HTTP_TOO_MANY_REQUESTS, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* The server thread: copies the last page under the lock, never more. */
static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct ioacct_httpd *m = cls;
	struct mconn *mc = conn_of(conn);
	char *body = NULL;
	size_t len = 0;

	/* The request is in: from now on the answer's budget. */
	conn_mark(m, mc, true);
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "ioacctd: only GET /metrics is served\n");
	if (m->ncreds) {
		unsigned int retry_s = 0;
		enum auth a = authorize(m, conn, mc, &retry_s);

		if (a != AUTH_OK)
			return respond_auth(conn, a, retry_s);
	}
	if (strcmp(url, "/metrics") != 0)
		return respond_text(conn, MHD_HTTP_NOT_FOUND,
				    "ioacctd: not found; the counters are at /metrics\n");
	pthread_mutex_lock(&m->page->lock);
	if (m->page->text && (body = malloc(m->page->len ? m->page->len : 1))) {
		memcpy(body, m->page->text, m->page->len);
		len = m->page->len;
	}
	pthread_mutex_unlock(&m->page->lock);
	if (!body)
		return respond_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				    "ioacctd: the counters are not ready yet; try again\n");
	return respond(conn, MHD_HTTP_OK, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

/* A socket address of any family metrics_listen may give. */
union listen_addr {
	struct sockaddr sa;
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
};

/* metrics_listen as a socket address; an IPv6 one adds MHD_USE_IPv6 to *flags. */
static int listen_addr(const struct ioacct_config *cfg, union listen_addr *la, uint16_t *port,
		       unsigned int *flags, char *err, size_t errlen)
{
	unsigned char addr[sizeof(struct in6_addr)];
	int family;

	if (ioacct_listen_parse(cfg->metrics_listen, &family, addr, port)) {
		snprintf(err, errlen, "metrics_listen: \"%s\" is not ADDRESS:PORT",
			 cfg->metrics_listen);
		return -EINVAL;
	}
	memset(la, 0, sizeof(*la));
	if (family == AF_INET6) {
		la->a6.sin6_family = AF_INET6;
		memcpy(&la->a6.sin6_addr, addr, sizeof(la->a6.sin6_addr));
		la->a6.sin6_port = htons(*port);
		*flags |= MHD_USE_IPv6;
	} else {
		la->a4.sin_family = AF_INET;
		memcpy(&la->a4.sin_addr, addr, sizeof(la->a4.sin_addr));
		la->a4.sin_port = htons(*port);
	}
	return 0;
}

/* The locks, the sweeper's condition (on CLOCK_MONOTONIC, as its deadlines) and the log's limit. */
static void httpd_init(struct ioacct_httpd *m)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&m->conn_lock, NULL);
	pthread_mutex_init(&m->log_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->conn_cond, &ca);
	pthread_condattr_destroy(&ca);
	ioacct_ratelimit_init(&m->log_rl, LOG_BURST, LOG_WINDOW_MS, 8);
}

/* metrics_tls_cert and metrics_tls_key (fds), read into memory; MHD_USE_TLS into *flags. */
static int load_tls(struct ioacct_httpd *m, const struct ioacct_config *cfg,
		    struct ioacct_httpd_fds *fds, unsigned int *flags, char *err, size_t errlen)
{
	const char *path = cfg->metrics_tls_cert;
	int ret;

	if (!cfg->metrics_tls_cert[0] != !cfg->metrics_tls_key[0]) {
		snprintf(err, errlen, "metrics_tls_cert and metrics_tls_key go together: set both "
			 "for HTTPS, or neither");
		return -EINVAL;
	}
	if (!cfg->metrics_tls_cert[0])
		return 0;
	if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen, "metrics_tls_cert: this libmicrohttpd has no TLS support; "
			 "use one built with GnuTLS, or a TLS proxy in front of ioacctd");
		return -ENOTSUP;
	}
	ret = read_small_fd(&fds->tls_cert, PEM_FILE_MAX, &m->tls_cert);
	if (!ret) {
		path = cfg->metrics_tls_key;
		ret = read_small_fd(&fds->tls_key, PEM_FILE_MAX, &m->tls_key);
	}
	if (ret) {
		snprintf(err, errlen, "cannot read %s for /metrics over HTTPS: %s", path,
			 file_errmsg(ret, "larger than 1 MiB"));
		return ret;
	}
	*flags |= MHD_USE_TLS;
	return 0;
}

/* What the settings give before the server starts: priority addresses, TLS, logins. */
static int httpd_settings(struct ioacct_httpd *m, const struct ioacct_config *cfg,
			  struct ioacct_httpd_fds *fds, unsigned int *flags, char *err,
			  size_t errlen)
{
	int n;

	m->throttle = calloc(THROTTLE_SLOTS, sizeof(*m->throttle));
	if (!m->throttle) {
		snprintf(err, errlen, "metrics: out of memory");
		return -ENOMEM;
	}
	if (cfg->metrics_priority[0]) {
		n = ioacct_addrs_parse(cfg->metrics_priority, m->priority, IOACCT_ADDRS_MAX);
		if (n < 0) {
			snprintf(err, errlen, "metrics_priority: \"%s\" is not a list of addresses",
				 cfg->metrics_priority);
			return -EINVAL;
		}
		m->npriority = (size_t)n;
	}
	n = load_tls(m, cfg, fds, flags, err, errlen);
	if (n)
		return n;
	if (cfg->metrics_auth_file[0])
		return load_creds(m, cfg->metrics_auth_file, &fds->auth, err, errlen);
	return 0;
}

struct ioacct_httpd *ioacct_httpd_start(const struct ioacct_config *cfg, struct ioacct_page *page,
					struct ioacct_httpd_fds *fds, char *err, size_t errlen)
{
	/* epoll, not select(): a thousand connections must not pass FD_SETSIZE. */
	unsigned int flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	struct ioacct_httpd *m;
	union listen_addr la;
	uint16_t port;

	if (listen_addr(cfg, &la, &port, &flags, err, errlen))
		return NULL;
	/*
	 * The page names every job, its user and mounts: with private_data, not
	 * for whoever can connect (any local user, on 127.0.0.1).
	 */
	if (cfg->private_data && !cfg->metrics_auth_file[0]) {
		snprintf(err, errlen, "private_data = yes, but /metrics on %s has no "
			 "metrics_auth_file: anyone who can connect would read every job's id, "
			 "user, mounts and counters; set metrics_auth_file (with metrics_tls_cert "
			 "beyond this host), or remove metrics_listen", cfg->metrics_listen);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "metrics: out of memory");
		return NULL;
	}
	m->cfg = cfg;
	m->page = page;
	httpd_init(m);
	if (httpd_settings(m, cfg, fds, &flags, err, errlen))
		goto fail;
	/* The logger first, or MHD prints what comes before it to stderr. */
	struct MHD_OptionItem opts[] = {
		{ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, m },
		/* Bound by the core (mserver.c): this process may not bind. */
		{ MHD_OPTION_LISTEN_SOCKET, fds->listen, NULL },
		{ MHD_OPTION_CONNECTION_LIMIT, MAX_CONNECTIONS + PRIORITY_CONNECTIONS, NULL },
		{ MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT_S, NULL },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, m },
		{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, m },
		{ m->tls_cert ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, m->tls_cert },
		{ m->tls_key ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, m->tls_key },
		{ MHD_OPTION_END, 0, NULL },
	};
	errno = 0;
	m->mhd = MHD_start_daemon(flags, port, admit, m, handle, m, MHD_OPTION_ARRAY, opts,
				  MHD_OPTION_END);
	/* libmicrohttpd closes the socket when it stops, as if it had made it. */
	if (m->mhd)
		fds->listen = -1;
	if (!m->mhd) {
		snprintf(err, errlen, "cannot serve /metrics on %s: %s; is another program "
			 "listening there? Change metrics_listen or remove it%s",
			 cfg->metrics_listen, errno ? strerror(errno) : "libmicrohttpd refused",
			 m->tls_cert ? " (or check metrics_tls_cert and metrics_tls_key)" : "");
		goto fail;
	}
	errno = pthread_create(&m->sweeper, NULL, sweep, m);
	if (errno) {
		snprintf(err, errlen, "metrics: cannot start a thread: %s", strerror(errno));
		goto fail;
	}
	m->sweeping = true;
	return m;
fail:
	ioacct_httpd_stop(m);
	return NULL;
}

void ioacct_httpd_stop(struct ioacct_httpd *m)
{
	if (!m)
		return;
	if (m->sweeping) {
		pthread_mutex_lock(&m->conn_lock);
		m->stopping = true;
		pthread_cond_signal(&m->conn_cond);
		pthread_mutex_unlock(&m->conn_lock);
		pthread_join(m->sweeper, NULL);
	}
	/* Waits for a check of a password at most: their cost is bounded at start. */
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	pthread_mutex_lock(&m->log_lock);
	ioacct_ratelimit_flush(&m->log_rl, UINT64_MAX, log_report, NULL);
	pthread_mutex_unlock(&m->log_lock);
	ioacct_ratelimit_free(&m->log_rl);
	free(m->throttle);
	pthread_mutex_destroy(&m->conn_lock);
	pthread_mutex_destroy(&m->log_lock);
	pthread_cond_destroy(&m->conn_cond);
	for (size_t i = 0; i < m->ncreds; i++) {
		free(m->creds[i].user);
		free(m->creds[i].hash);
	}
	free(m->creds);
	free(m->tls_cert);
	if (m->tls_key) {
		/* A private key does not stay behind in freed memory. */
		explicit_bzero(m->tls_key, strlen(m->tls_key));
		free(m->tls_key);
	}
	free(m);
}

#else /* !HAVE_MHD */

struct ioacct_httpd *ioacct_httpd_start(const struct ioacct_config *cfg, struct ioacct_page *page,
					struct ioacct_httpd_fds *fds, char *err, size_t errlen)
{
	(void)page;
	(void)fds;
	snprintf(err, errlen, "metrics_listen = %s: this ioacctd was built without libmicrohttpd, "
		 "so it cannot serve /metrics; install libmicrohttpd-dev and rebuild, or remove "
		 "metrics_listen from the configuration", cfg->metrics_listen);
	return NULL;
}

void ioacct_httpd_stop(struct ioacct_httpd *h)
{
	(void)h; /* never started */
}

#endif
