// SPDX-License-Identifier: GPL-2.0-or-later
/* The report as a Darshan log: lib/darshan/darshan_write.c does the work, this fits it to librender. */
#include "render.h"
#include "render_internal.h"

#include <errno.h>
#include <stdlib.h>

#include "darshan.h"
#include "log.h"

int ioacct_render_darshan_log(FILE *f, const struct ioacct_report *r, bool darshan_filter)
{
	struct ioacct_darshan_log *log = ioacct_darshan_from_report(r, darshan_filter);
	char err[512] = "";
	void *buf = NULL;
	size_t len = 0;
	int ret;

	if (!log)
		return -errno;
	ret = ioacct_darshan_write(log, &buf, &len, err, sizeof(err));
	if (ret) {
		/* The renderers' interface has no room for a message: say it here. */
		if (err[0])
			log_err("job %llu: cannot make its Darshan log: %s",
				(unsigned long long)r->jd->job.job_id, err);
		goto out;
	}
	fwrite_unlocked(buf, 1, len, f);
	ret = r_finish(f);
out:
	free(buf);
	ioacct_darshan_free(log);
	return ret;
}

int ioacct_render_darshan(FILE *f, const struct ioacct_report *r)
{
	return ioacct_render_darshan_log(f, r, false);
}
