// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A minimal HTTP/1.1 client for iotrace --otlp: one POST per connection
 * (Connection: close) to http://HOST[:PORT]/PATH, the status line read
 * back, everything within a deadline. No TLS, no redirects, no proxies: a
 * collector on the node or the local network (otlp.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "otlp.h"
#include "util.h"

int ioacct_http_url_parse(const char *url, const char *default_path, struct ioacct_http_url *u,
			  char *err, size_t errlen)
{
	const char *h, *end, *colon, *slash;
	size_t hlen;

	memset(u, 0, sizeof(*u));
	if (!strncmp(url, "https://", 8)) {
		snprintf(err, errlen, "'%s': https is not supported (use the collector's http "
			 "endpoint, e.g. http://localhost:4318)", url);
		return -EINVAL;
	}
	if (strncmp(url, "http://", 7)) {
		snprintf(err, errlen, "'%s' is not an http:// URL", url);
		return -EINVAL;
	}
	h = url + 7;
	slash = strchr(h, '/');
	end = slash ? slash : h + strlen(h);
	if (*h == '[') { /* [IPv6]:port */
		const char *rb = memchr(h, ']', (size_t)(end - h));

		if (!rb) {
			snprintf(err, errlen, "'%s': no ']' after the IPv6 address", url);
			return -EINVAL;
		}
		colon = rb[1] == ':' ? rb + 1 : NULL;
		hlen = (size_t)(rb - h - 1);
		h++;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hlen = (size_t)((colon ? colon : end) - h);
	}
	if (!hlen || hlen >= sizeof(u->host)) {
		snprintf(err, errlen, "'%s': no host, or too long a one", url);
		return -EINVAL;
	}
	memcpy(u->host, h, hlen);
	if (colon) {
		size_t plen = (size_t)(end - colon - 1);
		char *e;
		long port;

		if (!plen || plen >= sizeof(u->port)) {
			snprintf(err, errlen, "'%s': bad port", url);
			return -EINVAL;
		}
		memcpy(u->port, colon + 1, plen);
		port = strtol(u->port, &e, 10);
		if (*e || port < 1 || port > 65535) {
			snprintf(err, errlen, "'%s': bad port '%s'", url, u->port);
			return -EINVAL;
		}
	} else {
		snprintf(u->port, sizeof(u->port), "80");
	}
	/* OTLP/HTTP: a URL without a path gets the signal's default path. */
	if (!slash || !slash[1])
		slash = default_path;
	if (strlen(slash) >= sizeof(u->path) || strpbrk(slash, " \r\n")) {
		snprintf(err, errlen, "'%s': bad path", url);
		return -EINVAL;
	}
	snprintf(u->path, sizeof(u->path), "%s", slash);
	return 0;
}

/* Milliseconds left before `end` (ioacct_mono_ns), at least 0. */
static int left_ms(uint64_t end)
{
	uint64_t now = ioacct_mono_ns();

	return now >= end ? 0 : (int)((end - now + 999999) / 1000000);
}

/* Waits for fd to be ready for `events` before `end`: 0, or -ETIMEDOUT/-errno. */
static int wait_fd(int fd, short events, uint64_t end)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	do {
		n = poll(&p, 1, left_ms(end));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? 0 : -ETIMEDOUT;
}

/* A connected non-blocking socket to u, or -errno. */
static int dial(const struct ioacct_http_url *u, uint64_t end, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, ret = -ECONNREFUSED, gai;

	gai = getaddrinfo(u->host, u->port, &hints, &ai);
	if (gai) {
		snprintf(err, errlen, "%s: %s", u->host, gai_strerror(gai));
		return -EHOSTUNREACH;
	}
	for (a = ai; a; a = a->ai_next) {
		socklen_t sl = sizeof(ret);
		int soerr = 0;

		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) {
			ret = -errno;
		} else {
			ret = wait_fd(fd, POLLOUT, end);
			if (!ret && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) && soerr)
				ret = -soerr;
		}
		if (!ret)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(err, errlen, "connecting: %s", strerror(-ret));
	return fd < 0 ? ret : fd;
}

static int send_all(int fd, const void *p, size_t len, uint64_t end)
{
	const char *c = p;

	while (len) {
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EAGAIN) {
			int ret = wait_fd(fd, POLLOUT, end);

			if (ret)
				return ret;
			continue;
		}
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0) {
			c += n;
			len -= (size_t)n;
		}
	}
	return 0;
}

/* Reads until the status line's end; the status, or -errno. */
static int read_status(int fd, uint64_t end, char *err, size_t errlen)
{
	char buf[256];
	size_t len = 0;
	int status;

	while (len < sizeof(buf) - 1) {
		ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);
		int ret;

		if (n < 0 && errno == EAGAIN) {
			ret = wait_fd(fd, POLLIN, end);
			if (ret) {
				snprintf(err, errlen, "no answer: %s", strerror(-ret));
				return ret;
			}
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = '\0';
		if (strchr(buf, '\n'))
			break;
	}
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.%*1[01] %3d", &status) != 1 || status < 100) {
		snprintf(err, errlen, "no HTTP status in its answer");
		return -EPROTO;
	}
	return status;
}

int ioacct_http_post(const struct ioacct_http_url *u, const char *ctype, const void *body,
		     size_t len, int timeout_ms, char *err, size_t errlen)
{
	uint64_t end = ioacct_mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
	bool v6 = strchr(u->host, ':') != NULL; /* an IPv6 address: [::1] in Host */
	char head[1536];
	int fd, ret, n;

	fd = dial(u, end, err, errlen);
	if (fd < 0)
		return fd;
	n = snprintf(head, sizeof(head),
		     "POST %s HTTP/1.1\r\nHost: %s%s%s:%s\r\n"
		     "User-Agent: iotrace/" PACKAGE_VERSION "\r\n"
		     "Content-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     u->path, v6 ? "[" : "", u->host, v6 ? "]" : "", u->port, ctype, len);
	ret = send_all(fd, head, (size_t)n, end);
	if (!ret)
		ret = send_all(fd, body, len, end);
	if (ret)
		snprintf(err, errlen, "sending: %s", strerror(-ret));
	else
		ret = read_status(fd, end, err, errlen);
	close(fd);
	return ret;
}
