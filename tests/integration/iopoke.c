// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iopoke: sends one request, well-formed or deliberately broken, to ioacctd
 * and prints the reply, for the integration tests.
 *
 *   iopoke SOCKET status
 *   iopoke SOCKET register JOB STEP PID [CGROUP]
 *   iopoke SOCKET register-hangup JOB STEP PID [CGROUP]
 *                                  sends the REGISTER and closes without a reply
 *   iopoke SOCKET finish-step JOB STEP
 *   iopoke SOCKET finish-job JOB [REPORT NODES]
 *                                  REPORT: a report's path as the epilog sends it
 *                                  (JSON), NODES the job's, "n1,n2": a merged report
 *   iopoke SOCKET snapshot JOB [CLUSTER]
 *   iopoke SOCKET garbage KIND     KIND: random, truncated, oversized, badmagic,
 *                                  badversion, badtype, shortattr
 *
 * Prints "status=N error=TEXT" (and "job=N key=N slot=N" for a register,
 * rows for a snapshot) and exits 0 when a reply came, 3 when none did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto.h"

static int connect_to(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("iopoke: connect");
		exit(3);
	}
	return fd;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Sends raw bytes, then prints whatever reply comes back. */
static int raw(const char *sock, const uint8_t *msg, size_t len, bool close_write)
{
	struct ioacct_buf in = { 0 }, out = { .data = (uint8_t *)msg, .len = len };
	struct ioacct_reply rep;
	char err[512];
	int fd = connect_to(sock), ret;

	if (ioacct_proto_send(fd, &out, 2000)) {
		printf("send failed\n");
		return 3;
	}
	if (close_write)
		shutdown(fd, SHUT_WR);
	ret = ioacct_proto_recv(fd, &in, 8000, err, sizeof(err));
	if (ret) {
		printf("no reply: %s\n", err);
		return 3;
	}
	ret = ioacct_proto_decode_reply(in.data, in.len, &rep, err, sizeof(err));
	if (ret) {
		printf("undecodable reply: %s\n", err);
		return 3;
	}
	printf("status=%d error=%s\n", rep.status, rep.error);
	ioacct_reply_free(&rep);
	ioacct_buf_free(&in);
	close(fd);
	return 0;
}

static int garbage(const char *sock, const char *kind)
{
	uint8_t m[64];

	memset(m, 0, sizeof(m));
	put_le(m, IOACCT_PROTO_MAGIC, 4);
	put_le(m + 4, IOACCT_PROTO_VERSION, 2);
	put_le(m + 6, IOACCT_MSG_STATUS, 2);
	put_le(m + 12, 7, 4);
	if (!strcmp(kind, "random")) {
		uint8_t r[1024];

		srand(42);
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (uint8_t)rand();
		return raw(sock, r, sizeof(r), true);
	}
	if (!strcmp(kind, "truncated")) {
		put_le(m + 8, 100, 4); /* announces 100 bytes, sends 10 */
		return raw(sock, m, 26, true);
	}
	if (!strcmp(kind, "oversized")) {
		put_le(m + 8, IOACCT_PROTO_MAX_MSG + 1, 4);
		return raw(sock, m, 16, false);
	}
	if (!strcmp(kind, "badmagic")) {
		put_le(m, 0xdeadbeef, 4);
		return raw(sock, m, 16, false);
	}
	if (!strcmp(kind, "badversion")) {
		put_le(m + 4, 999, 2);
		return raw(sock, m, 16, false);
	}
	if (!strcmp(kind, "badtype")) {
		put_le(m + 6, 77, 2);
		return raw(sock, m, 16, false);
	}
	if (!strcmp(kind, "shortattr")) {
		put_le(m + 6, IOACCT_MSG_REGISTER, 2);
		put_le(m + 8, 8, 4);
		put_le(m + 16, 3, 2);    /* job_id ... */
		put_le(m + 18, 200, 2);  /* ... claiming 200 bytes in an 8-byte payload */
		return raw(sock, m, 24, false);
	}
	fprintf(stderr, "iopoke: unknown garbage kind %s\n", kind);
	return 2;
}

int main(int argc, char **argv)
{
	struct ioacct_request req;
	struct ioacct_reply rep;
	char err[512];
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: iopoke SOCKET status|register|finish-step|finish-job|snapshot|garbage ...\n");
		return 2;
	}
	if (!strcmp(argv[2], "garbage") && argc == 4)
		return garbage(argv[1], argv[3]);
	memset(&req, 0, sizeof(req));
	if (!strcmp(argv[2], "status")) {
		req.type = IOACCT_MSG_STATUS;
	} else if ((!strcmp(argv[2], "register") || !strcmp(argv[2], "register-hangup")) &&
		   argc >= 6) {
		req.type = IOACCT_MSG_REGISTER;
		req.u.reg.job_id = strtoull(argv[3], NULL, 10);
		req.u.reg.step_id = (uint32_t)strtoul(argv[4], NULL, 10);
		req.u.reg.pid = atoi(argv[5]);
		req.u.reg.uid = (uint32_t)getuid();
		req.u.reg.gid = (uint32_t)getgid();
		if (argc > 6)
			snprintf(req.u.reg.cgroup, sizeof(req.u.reg.cgroup), "%s", argv[6]);
	} else if (!strcmp(argv[2], "finish-step") && argc == 5) {
		req.type = IOACCT_MSG_FINISH_STEP;
		req.u.fin.job_id = strtoull(argv[3], NULL, 10);
		req.u.fin.step_id = (uint32_t)strtoul(argv[4], NULL, 10);
	} else if (!strcmp(argv[2], "finish-job") && (argc == 4 || argc == 6)) {
		req.type = IOACCT_MSG_FINISH_JOB;
		req.u.fin.job_id = strtoull(argv[3], NULL, 10);
		if (argc == 6) {
			snprintf(req.u.fin.report.path, sizeof(req.u.fin.report.path), "%s", argv[4]);
			req.u.fin.report.formats = 1U << 1; /* IOACCT_FMT(IOACCT_RENDER_JSON) */
			snprintf(req.u.fin.report.nodes, sizeof(req.u.fin.report.nodes), "%s", argv[5]);
		}
	} else if (!strcmp(argv[2], "snapshot") && argc >= 4) {
		req.type = IOACCT_MSG_SNAPSHOT;
		req.u.query.job_id = strtoull(argv[3], NULL, 10);
		if (argc > 4)
			snprintf(req.u.query.cluster, sizeof(req.u.query.cluster), "%s", argv[4]);
	} else {
		fprintf(stderr, "iopoke: bad arguments\n");
		return 2;
	}
	if (!strcmp(argv[2], "register-hangup")) {
		/* A client that gives up before the reply: the daemon must not keep the job. */
		struct ioacct_buf out = { 0 };
		int fd = connect_to(argv[1]);

		if (ioacct_proto_encode_request(&out, &req) || ioacct_proto_send(fd, &out, 2000)) {
			printf("send failed\n");
			return 3;
		}
		ioacct_buf_free(&out);
		close(fd);
		printf("sent, hung up\n");
		return 0;
	}
	ret = ioacct_client_call(argv[1], &req, &rep, 8000, err, sizeof(err));
	if (ret) {
		printf("no reply: %s\n", err);
		return 3;
	}
	printf("status=%d error=%s\n", rep.status, rep.error);
	if (req.type == IOACCT_MSG_REGISTER)
		printf("job=%llu key=%lld slot=%u\n", (unsigned long long)rep.job_id,
		       (long long)rep.job_key, rep.slot);
	if (req.type == IOACCT_MSG_STATUS)
		printf("jobs=%u cgroups=%u mode=%s detail=%s\n", rep.jobs_running, rep.cgroups_watched,
		       rep.probe_mode, rep.detail);
	for (size_t i = 0; i < rep.nrows; i++)
		printf("row step=%u mount=%s op=%u bytes=%llu calls=%llu\n", rep.rows[i].step_id,
		       rep.rows[i].mount.path, rep.rows[i].op, (unsigned long long)rep.rows[i].c.bytes,
		       (unsigned long long)rep.rows[i].c.calls);
	ioacct_reply_free(&rep);
	return 0;
}
