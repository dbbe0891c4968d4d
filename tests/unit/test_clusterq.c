/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of ioacctd's queue of cluster-store queries (daemon/clusterq.c):
 * against a "PostgreSQL" that takes the connection and never answers (a
 * listening socket nobody accepts from), the worker is held in its connect
 * while the test fills the queue: a user's share is bounded, the uids take
 * turns, a cancelled request is never answered, and every request that
 * waited through the failed connect gets its error at once after it. The
 * connection is the cluster store's worker's (daemon/pgremote.h): this
 * binary, started again as `--worker pg`, as ioacctd starts itself.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <pwd.h>

#include "clusterq.h"
#include "pgstore.h"
#include "store.h"
#include "wmain.h"
#include "worker.h"

#define ALICE 1000
#define BOB 1001

/* Tags: the address of a slot per request. */
static char tags[IOACCT_CLUSTERQ_PER_UID + 2];

static void query(struct ioacct_request *req, uint32_t seq)
{
	memset(req, 0, sizeof(*req));
	req->type = IOACCT_MSG_QUERY;
	req->seq = seq;
}

static void test_bounds_turns_cancel(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	struct ioacct_config cfg;
	struct ioacct_clusterq *q;
	struct ioacct_request req;
	struct ioacct_reply rep;
	struct ioacct_store *st;
	char dir[] = "/tmp/test_clusterq.XXXXXX", err[256];
	int lfd, n = 0, order[IOACCT_CLUSTERQ_PER_UID + 2];
	void *tag;

	(void)state;
	if (!ioacct_pgstore_available())
		skip();
	/* As root, the worker runs as the account ioacct: without it, nothing to test here. */
	if (geteuid() == 0 && !getpwnam("ioacct")) {
		fprintf(stderr, "no account ioacct for the cluster store's worker: skipped\n");
		skip();
	}
	/* The black hole: the kernel completes the connection, nobody ever answers. */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lfd, 64), 0);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&sa, &salen), 0);

	assert_non_null(mkdtemp(dir));
	ioacct_config_defaults(&cfg);
	snprintf(cfg.db_path, sizeof(cfg.db_path), "%s/ioacct.db", dir);
	snprintf(cfg.cluster_db, sizeof(cfg.cluster_db),
		 "host=127.0.0.1 port=%u dbname=ioacct user=ioacct", ntohs(sa.sin_port));
	st = ioacct_store_open(cfg.db_path, IOACCT_STORE_RDWR, err, sizeof(err));
	assert_non_null(st);
	ioacct_store_close(st);

	assert_int_equal(ioacct_workers_init(&cfg), 0);
	q = ioacct_clusterq_new(&cfg);
	assert_non_null(q);
	/* Alice's first is taken by the worker, which then waits for the black hole (2 s). */
	query(&req, 0);
	assert_int_equal(ioacct_clusterq_submit(q, &req, ALICE, &tags[0], &rep), 0);
	usleep(300 * 1000);
	for (int i = 1; i < IOACCT_CLUSTERQ_PER_UID; i++) {
		query(&req, (uint32_t)i);
		assert_int_equal(ioacct_clusterq_submit(q, &req, ALICE, &tags[i], &rep), 0);
	}
	/* Her share is full: busy at once, saying so. */
	memset(&rep, 0, sizeof(rep));
	query(&req, 99);
	assert_int_equal(ioacct_clusterq_submit(q, &req, ALICE, &tags[IOACCT_CLUSTERQ_PER_UID], &rep),
			 -EBUSY);
	assert_int_equal(rep.status, -EBUSY);
	assert_non_null(strstr(rep.error, "busy"));
	ioacct_reply_free(&rep);
	/* Bob's is queued after all of hers, and served before her second. */
	query(&req, 100);
	assert_int_equal(ioacct_clusterq_submit(q, &req, BOB, &tags[IOACCT_CLUSTERQ_PER_UID + 1],
						&rep), 0);
	/* Her last goes away: never answered. */
	ioacct_clusterq_cancel(q, &tags[IOACCT_CLUSTERQ_PER_UID - 1]);

	/* Every other one is answered once the connect fails, the error said. */
	while (n < IOACCT_CLUSTERQ_PER_UID) {
		struct pollfd p = { .fd = ioacct_clusterq_fd(q), .events = POLLIN };

		assert_int_equal(poll(&p, 1, 15000), 1);
		while (ioacct_clusterq_take(q, &tag, &rep)) {
			assert_true(n < IOACCT_CLUSTERQ_PER_UID);
			order[n++] = (int)((char *)tag - tags);
			assert_int_not_equal(rep.status, 0);
			assert_non_null(strstr(rep.error, "cluster store (cluster_db) unavailable"));
			ioacct_reply_free(&rep);
		}
	}
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], IOACCT_CLUSTERQ_PER_UID + 1);
	for (int i = 2; i < n; i++)
		assert_int_equal(order[i], i - 1);
	assert_false(ioacct_clusterq_take(q, &tag, &rep));

	ioacct_clusterq_free(q);
	ioacct_workers_fini();
	close(lfd);
	snprintf(err, sizeof(err), "rm -rf %s", dir);
	assert_int_equal(system(err), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_turns_cancel),
	};

	/* This binary started again as the cluster store's worker (worker.h). */
	if (argc > 1 && !strcmp(argv[1], IOACCT_WORKER_ARG))
		return ioacct_worker_main(argc, argv);

	return cmocka_run_group_tests(tests, NULL, NULL);
}
