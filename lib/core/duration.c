/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Durations as slurmdbd writes them (see duration.h). */
#include "duration.h"

#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "util.h"

#define DURATION_FORMS "a number and a unit: 12months, 30days, 48hours, 90minutes, 20s"

/* Every spelling of a unit, singular and plural, as slurmdbd's and ours. */
static const struct {
	const char *name;
	uint64_t seconds;
} units[] = {
	{ "months", IOACCT_SECONDS_PER_MONTH }, { "month", IOACCT_SECONDS_PER_MONTH },
	{ "days", 86400 },	{ "day", 86400 },	{ "d", 86400 },
	{ "hours", 3600 },	{ "hour", 3600 },	{ "h", 3600 },
	{ "minutes", 60 },	{ "minute", 60 },	{ "min", 60 },
	{ "seconds", 1 },	{ "second", 1 },	{ "sec", 1 },	{ "s", 1 },
};

static int bad(const char *s, const char *why, char *err, size_t errlen)
{
	/* %.80s: the message stays one line of a sensible length. */
	return ioacct_seterr(err, errlen, -EINVAL, "\"%.80s\" %s (%s)", s, why, DURATION_FORMS);
}

int ioacct_duration_parse(const char *s, enum ioacct_duration_unit bare_unit, uint64_t *out_s,
			  char *err, size_t errlen)
{
	uint64_t v = 0, mul = bare_unit == IOACCT_DUR_MONTHS ? IOACCT_SECONDS_PER_MONTH : 1;
	const char *p = s;
	size_t i;

	if (!s || *s < '0' || *s > '9')
		return bad(s ? s : "", "is not a duration", err, errlen);
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > IOACCT_DURATION_MAX_S)
			return bad(s, "is too long (at most 1000 years)", err, errlen);
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p) {
		for (i = 0; i < ARRAY_SIZE(units) && strcasecmp(p, units[i].name); i++)
			;
		if (i == ARRAY_SIZE(units))
			return bad(s, "has an unknown unit", err, errlen);
		mul = units[i].seconds;
	}
	if (v == 0)
		return bad(s, "is zero (leave the key out to keep everything)", err, errlen);
	if (v > IOACCT_DURATION_MAX_S / mul)
		return bad(s, "is too long (at most 1000 years)", err, errlen);
	*out_s = v * mul;
	return 0;
}

const char *ioacct_duration_format(uint64_t s, char *buf, size_t len)
{
	static const struct {
		const char *name;
		uint64_t seconds;
	} forms[] = {
		{ "months", IOACCT_SECONDS_PER_MONTH }, { "days", 86400 }, { "hours", 3600 },
		{ "minutes", 60 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		if (s && s % forms[i].seconds == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(s / forms[i].seconds),
				 forms[i].name);
			return buf;
		}
	}
	snprintf(buf, len, "%llus", (unsigned long long)s);
	return buf;
}
