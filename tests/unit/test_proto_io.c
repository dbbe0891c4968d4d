/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the wire protocol's transport (lib/core/proto_io.c): whole
 * messages over real sockets and pipes, and the client's call against a
 * tiny server, a descriptor beside the request included.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "exeprobe.h"
#include "proto.h"
#include "protobuild.h"

/* ---- transport ---- */

struct sender {
	int fd;
	const struct ioacct_buf *b;
	int ret;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;

	s->ret = ioacct_proto_send(s->fd, s->b, 5000);
	return NULL;
}

static void test_send_recv_large(void **state)
{
	struct ioacct_snap_row *rows = calloc(200, sizeof(*rows));
	struct ioacct_reply in, out;
	struct ioacct_buf b = { 0 }, got = { 0 };
	struct sender s;
	pthread_t t;
	char err[256] = "";
	int sv[2];

	(void)state;
	assert_non_null(rows);
	fill_reply(&in, rows, 200);
	/* Long paths: the message outgrows the socket buffer, so both sides loop. */
	for (size_t i = 0; i < 200; i++)
		memset(rows[i].mount.path, 'p', 3000);
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);
	assert_true(b.len > 600000);
	in.seq++;
	assert_int_equal(ioacct_proto_encode_reply(&b, &in), 0);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	s = (struct sender){ .fd = sv[0], .b = &b };
	assert_int_equal(pthread_create(&t, NULL, sender_main, &s), 0);
	/* Two messages back to back: each recv takes one and no more. */
	for (uint32_t i = 0; i < 2; i++) {
		if (ioacct_proto_recv(sv[1], &got, 5000, err, sizeof(err)))
			fail_msg("recv: %s", err);
		assert_int_equal(ioacct_proto_decode_reply(got.data, got.len, &out, err, sizeof(err)), 0);
		in.seq = 99 + i;
		assert_reply_equal(&in, &out);
		ioacct_reply_free(&out);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(s.ret, 0);
	close(sv[0]);
	close(sv[1]);
	ioacct_buf_free(&b);
	ioacct_buf_free(&got);
	free(rows);
}

static void test_send_recv_pipe(void **state)
{
	struct ioacct_request in, out;
	struct ioacct_buf b = { 0 }, got = { 0 };
	char err[256];
	int p[2];

	(void)state;
	fill_register(&in);
	encode_req(&b, &in);
	assert_int_equal(pipe(p), 0);
	/* Not a socket: send() fails with ENOTSOCK, write() takes over. */
	assert_int_equal(ioacct_proto_send(p[1], &b, 1000), 0);
	assert_int_equal(ioacct_proto_recv(p[0], &got, 1000, err, sizeof(err)), 0);
	assert_int_equal(ioacct_proto_decode_request(got.data, got.len, &out, err, sizeof(err)), 0);
	assert_string_equal(out.u.reg.cgroup, in.u.reg.cgroup);
	close(p[0]);
	close(p[1]);
	ioacct_buf_free(&b);
	ioacct_buf_free(&got);
}

static void test_recv_errors(void **state)
{
	struct ioacct_buf got = { 0 };
	struct timespec t0, t1;
	struct raw r = { 0 };
	char err[256], tail[8];
	long ms;
	int sv[2];

	(void)state;
	/* A header announcing 100 bytes, 10 of them, then the end. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_STATUS, 1);
	le32(r.p + 8, 100);
	raw_bytes(&r, "0123456789", 10);
	assert_int_equal(write(sv[0], r.p, r.len), (ssize_t)r.len);
	close(sv[0]);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 1000, err, sizeof(err)), -ECONNRESET);
	assert_string_equal(err, "connection closed after 26 of 116 bytes of the message");
	close(sv[1]);

	/* Nothing at all, then the end. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[0]);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 1000, err, sizeof(err)), -ECONNRESET);
	assert_err_contains(err, "after 0 of 16 bytes of the header");
	close(sv[1]);

	/* A peer that says nothing. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 100, err, sizeof(err)), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 90 && ms < 2000);
	assert_err_contains(err, "nothing received for 100 ms");

	/* A header announcing too much: refused, and nothing after it read. */
	raw_begin(&r, IOACCT_PROTO_MAGIC, IOACCT_PROTO_VERSION, IOACCT_MSG_STATUS, 1);
	le32(r.p + 8, IOACCT_PROTO_MAX_MSG + 1);
	raw_bytes(&r, "tail", 4);
	assert_int_equal(write(sv[0], r.p, r.len), (ssize_t)r.len);
	assert_int_equal(ioacct_proto_recv(sv[1], &got, 1000, err, sizeof(err)), -EMSGSIZE);
	assert_err_contains(err, "more than the limit");
	assert_int_equal(recv(sv[1], tail, sizeof(tail), MSG_DONTWAIT), 4);
	assert_memory_equal(tail, "tail", 4);
	close(sv[0]);
	close(sv[1]);
	ioacct_buf_free(&got);
	free(r.p);
}

static void test_send_closed_peer(void **state)
{
	struct ioacct_request req;
	struct ioacct_buf b = { 0 };
	int sv[2];

	(void)state;
	fill_register(&req);
	encode_req(&b, &req);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[1]);
	/* EPIPE, and no SIGPIPE killing the test. */
	assert_int_equal(ioacct_proto_send(sv[0], &b, 1000), -EPIPE);
	close(sv[0]);
	ioacct_buf_free(&b);
}

/* ---- the client against a tiny server ---- */

enum server_mode {
	SERVE_ECHO,     /* a reply carrying what was asked */
	SERVE_ERROR,    /* an error reply */
	SERVE_BAD_SEQ,  /* a reply to some other request */
	SERVE_HANG_UP,  /* read the request, close */
	SERVE_SILENT,   /* never accept */
	SERVE_FD,       /* as ECHO, the inode of the descriptor that came with it in detail */
	SERVE_FD_LATER, /* close the first connection unread (no room), then as SERVE_FD */
};

struct server {
	char dir[64];
	char path[128];
	int fd;
	enum server_mode mode;
	pthread_t thread;
	struct ioacct_request req; /* as received */
	int ret;
	int rfd; /* SERVE_FD: the descriptor received, or -1 */
	ino_t rino; /* SERVE_FD: its inode */
};

/* The message's first byte with the descriptor beside it, as ioacctd reads it; then the rest. */
static int recv_with_fd(struct server *srv, int fd, struct ioacct_buf *b)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	uint8_t first;
	struct iovec iov = { .iov_base = &first, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	struct ioacct_buf rest = { 0 };
	size_t len;
	char err[256];
	int ret;

	srv->rfd = -1;
	if (recvmsg(fd, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -EPROTO;
	c = CMSG_FIRSTHDR(&mh);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(&srv->rfd, CMSG_DATA(c), sizeof(int));
	/* The rest is the message less its first byte: read it whole, then put the byte back. */
	ret = ioacct_buf_reserve(&rest, IOACCT_PROTO_HDR_LEN);
	if (ret)
		return ret;
	rest.data[0] = first;
	rest.len = 1;
	while (rest.len < IOACCT_PROTO_HDR_LEN) {
		ssize_t n = read(fd, rest.data + rest.len, IOACCT_PROTO_HDR_LEN - rest.len);

		if (n <= 0)
			goto bad;
		rest.len += (size_t)n;
	}
	if (ioacct_proto_header_check(rest.data, &len, err, sizeof(err)) ||
	    ioacct_buf_reserve(&rest, len - rest.len))
		goto bad;
	while (rest.len < len) {
		ssize_t n = read(fd, rest.data + rest.len, len - rest.len);

		if (n <= 0)
			goto bad;
		rest.len += (size_t)n;
	}
	*b = rest;
	return 0;
bad:
	ioacct_buf_free(&rest);
	return -EPROTO;
}

static int serve_one(struct server *srv, int fd)
{
	struct ioacct_buf b = { 0 };
	struct ioacct_reply rep;
	char err[256];
	int ret;

	if (srv->mode == SERVE_FD)
		ret = recv_with_fd(srv, fd, &b);
	else
		ret = ioacct_proto_recv(fd, &b, 5000, err, sizeof(err));
	if (ret)
		goto out;
	ret = ioacct_proto_decode_request(b.data, b.len, &srv->req, err, sizeof(err));
	if (ret || srv->mode == SERVE_HANG_UP)
		goto out;
	memset(&rep, 0, sizeof(rep));
	rep.seq = srv->req.seq + (srv->mode == SERVE_BAD_SEQ);
	rep.job_id = srv->req.u.reg.job_id;
	rep.slot = 3;
	ioacct_strlcpy(rep.detail, srv->req.u.reg.cgroup, sizeof(rep.detail));
	if (srv->mode == SERVE_FD) {
		struct stat sb;

		if (srv->rfd >= 0 && !fstat(srv->rfd, &sb)) {
			snprintf(rep.detail, sizeof(rep.detail), "ino %llu", (unsigned long long)sb.st_ino);
			srv->rino = sb.st_ino;
		}
		if (srv->rfd >= 0)
			close(srv->rfd);
	}
	if (srv->mode == SERVE_ERROR) {
		rep.status = -EPERM;
		snprintf(rep.error, sizeof(rep.error), "uid %u may not register", srv->req.u.reg.uid);
	}
	ioacct_buf_reset(&b);
	ret = ioacct_proto_encode_reply(&b, &rep);
	if (ret)
		goto out;
	ret = ioacct_proto_send(fd, &b, 5000);
out:
	ioacct_buf_free(&b);
	return ret;
}

static void *server_main(void *arg)
{
	struct server *srv = arg;
	struct pollfd pfd = { .fd = srv->fd, .events = POLLIN };
	int fd;

	/* Bounded, so that a client failing before connect cannot hang the test. */
	if (poll(&pfd, 1, 5000) != 1) {
		srv->ret = -ETIMEDOUT;
		return NULL;
	}
	fd = accept(srv->fd, NULL, NULL);
	if (fd >= 0 && srv->mode == SERVE_FD_LATER) {
		close(fd);
		srv->mode = SERVE_FD;
		fd = poll(&pfd, 1, 5000) == 1 ? accept(srv->fd, NULL, NULL) : -1;
	}
	if (fd < 0) {
		srv->ret = -errno;
		return NULL;
	}
	srv->ret = serve_one(srv, fd);
	close(fd);
	return NULL;
}

static void server_start(struct server *srv, enum server_mode mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	memset(srv, 0, sizeof(*srv));
	srv->mode = mode;
	snprintf(srv->dir, sizeof(srv->dir), "/tmp/test_proto.XXXXXX");
	assert_non_null(mkdtemp(srv->dir));
	snprintf(srv->path, sizeof(srv->path), "%s/ioacctd.sock", srv->dir);
	assert_int_equal(ioacct_strlcpy(addr.sun_path, srv->path, sizeof(addr.sun_path)), 0);
	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(srv->fd >= 0);
	assert_int_equal(bind(srv->fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	assert_int_equal(listen(srv->fd, 4), 0);
	if (mode != SERVE_SILENT)
		assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

static void server_stop(struct server *srv)
{
	if (srv->mode != SERVE_SILENT)
		assert_int_equal(pthread_join(srv->thread, NULL), 0);
	close(srv->fd);
	unlink(srv->path);
	rmdir(srv->dir);
}

static void test_client_call(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct server srv;
	char err[512] = "";
	uint32_t first_seq;

	(void)state;
	fill_register(&req);
	server_start(&srv, SERVE_ECHO);
	if (ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)))
		fail_msg("client_call: %s", err);
	server_stop(&srv);
	assert_int_equal(srv.ret, 0);
	assert_int_equal(rep.status, 0);
	assert_true(rep.job_id == req.u.reg.job_id);
	assert_int_equal(rep.slot, 3);
	assert_string_equal(rep.detail, req.u.reg.cgroup);
	assert_string_equal(srv.req.u.reg.job_name, req.u.reg.job_name);
	/* The seq comes from the client's counter, not from req. */
	assert_int_equal(rep.seq, srv.req.seq);
	first_seq = rep.seq;
	ioacct_reply_free(&rep);

	server_start(&srv, SERVE_ERROR);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)), 0);
	server_stop(&srv);
	assert_int_equal(rep.status, -EPERM);
	assert_string_equal(rep.error, "uid 1000 may not register");
	assert_int_not_equal(rep.seq, first_seq);
	ioacct_reply_free(&rep);
}

/* probe_exe's file goes beside the request (SCM_RIGHTS), with its first byte. */
static void test_client_call_fd(void **state)
{
	struct ioacct_request req = { .type = IOACCT_MSG_PROBE_EXE };
	struct ioacct_reply rep;
	struct server srv;
	char err[512] = "", want[64];
	struct stat sb;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &sb), 0);
	snprintf(want, sizeof(want), "ino %llu", (unsigned long long)sb.st_ino);
	req.u.probe.job_id = 77;
	req.u.probe.step_id = 2;
	server_start(&srv, SERVE_FD);
	if (ioacct_client_call_fd(srv.path, &req, fd, &rep, 5000, err, sizeof(err)))
		fail_msg("client_call_fd: %s", err);
	server_stop(&srv);
	close(fd);
	assert_int_equal(srv.ret, 0);
	assert_int_equal(rep.status, 0);
	assert_true(srv.req.u.probe.job_id == 77);
	assert_int_equal(srv.req.u.probe.step_id, 2);
	assert_string_equal(rep.detail, want);
	assert_int_equal(rep.seq, srv.req.seq);
	ioacct_reply_free(&rep);
}

/*
 * A job's program before it runs (exeprobe.h): found as execvp() finds it
 * and sent; silent where the job is not monitored or the daemon predates
 * the request; an error or no answer in time is the caller's one line.
 */
static void test_exeprobe(void **state)
{
	struct server srv;
	struct stat sb;
	char err[512] = "";

	(void)state;
	assert_int_equal(stat("/bin/sh", &sb), 0);
	/* PATH's first directory with it: an empty element is the working directory. */
	server_start(&srv, SERVE_FD);
	if (ioacct_exeprobe(srv.path, "sh", "/nonexistent::/bin:/usr/bin", "hpc", 7, 1, 5000, err,
			    sizeof(err)))
		fail_msg("exeprobe: %s", err);
	server_stop(&srv);
	assert_true(srv.rino == sb.st_ino);
	assert_int_equal(srv.req.type, IOACCT_MSG_PROBE_EXE);
	assert_true(srv.req.u.probe.job_id == 7);
	assert_int_equal(srv.req.u.probe.step_id, 1);
	assert_string_equal(srv.req.u.probe.cluster, "hpc");

	/* The daemon had no room (a uid's 32 connections): asked again. */
	server_start(&srv, SERVE_FD_LATER);
	if (ioacct_exeprobe(srv.path, "/bin/sh", NULL, "", 7, 1, 5000, err, sizeof(err)))
		fail_msg("exeprobe, asked again: %s", err);
	server_stop(&srv);
	assert_true(srv.rino == sb.st_ino);

	server_start(&srv, SERVE_ERROR);
	assert_int_equal(ioacct_exeprobe(srv.path, "/bin/sh", NULL, "", 7, 1, 5000, err, sizeof(err)),
			 -EPERM);
	server_stop(&srv);
	assert_err_contains(err, "may not");
	/* No answer in time: the caller's line says so. */
	server_start(&srv, SERVE_SILENT);
	assert_int_equal(ioacct_exeprobe(srv.path, "/bin/sh", NULL, "", 7, 1, 100, err, sizeof(err)),
			 -ETIMEDOUT);
	assert_err_contains(err, "no reply from ioacctd on ");
	server_stop(&srv);
	/* No daemon; a daemon before the request (a reply to another seq); no such program. */
	assert_int_equal(ioacct_exeprobe(srv.path, "/bin/sh", NULL, "", 7, 1, 100, err, sizeof(err)), 0);
	server_start(&srv, SERVE_BAD_SEQ);
	assert_int_equal(ioacct_exeprobe(srv.path, "/bin/sh", NULL, "", 7, 1, 5000, err, sizeof(err)), 0);
	server_stop(&srv);
	assert_int_equal(ioacct_exeprobe(srv.path, "no-such-program", "/nonexistent", "", 7, 1, 100, err,
					 sizeof(err)), 0);
}

static void test_client_call_errors(void **state)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct server srv;
	char err[512], want[512], path[300];

	(void)state;
	fill_register(&req);

	server_start(&srv, SERVE_BAD_SEQ);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)), -EPROTO);
	server_stop(&srv);
	assert_err_contains(err, "bad reply from ioacctd on ");
	assert_err_contains(err, "sequence number");
	assert_null(rep.rows);

	server_start(&srv, SERVE_HANG_UP);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 5000, err, sizeof(err)),
			 -ECONNRESET);
	server_stop(&srv);
	snprintf(want, sizeof(want),
		 "no reply from ioacctd on %s: connection closed after 0 of 16 bytes of the header",
		 srv.path);
	assert_string_equal(err, want);

	/* A daemon that never answers: the connection is queued, the reply never comes. */
	server_start(&srv, SERVE_SILENT);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 100, err, sizeof(err)),
			 -ETIMEDOUT);
	assert_err_contains(err, "no reply from ioacctd on ");
	/* Gone: nothing listens on the path any more. */
	server_stop(&srv);
	assert_int_equal(ioacct_client_call(srv.path, &req, &rep, 100, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "cannot connect to %s: No such file or directory", srv.path);
	assert_string_equal(err, want);

	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(ioacct_client_call(path, &req, &rep, 100, err, sizeof(err)), -ENAMETOOLONG);
	assert_err_contains(err, "cannot connect to /aaa");
	assert_err_contains(err, "longer than 107 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_recv_large),
		cmocka_unit_test(test_send_recv_pipe),
		cmocka_unit_test(test_recv_errors),
		cmocka_unit_test(test_send_closed_peer),
		cmocka_unit_test(test_client_call),
		cmocka_unit_test(test_client_call_fd),
		cmocka_unit_test(test_client_call_errors),
		cmocka_unit_test(test_exeprobe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
