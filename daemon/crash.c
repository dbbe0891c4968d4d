// SPDX-License-Identifier: GPL-2.0-or-later
#include "crash.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Written once by ioacct_crash_init(), before the exporter's thread starts; read only after. */
static const char *crash_at;

void ioacct_crash_init(void)
{
	crash_at = getenv("IOACCT_CRASH_AT");
	if (crash_at)
		log_warn("IOACCT_CRASH_AT=%s: this daemon will kill itself there (tests only)",
			 crash_at);
}

void ioacct_crash_point(const char *point)
{
	if (crash_at && strcmp(crash_at, point) == 0) {
		log_warn("IOACCT_CRASH_AT=%s: killing myself with SIGKILL (fault injection)", point);
		raise(SIGKILL);
	}
}
