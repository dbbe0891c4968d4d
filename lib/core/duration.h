/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Durations as slurmdbd.conf writes its purge settings (PurgeJobAfter):
 * a number and a unit, "12months", "30days", "48hours", plus "90minutes" and
 * seconds ("20s") for short test settings. slurmdbd reads a bare number as
 * months; `bare_unit` says what a bare number means here (months for
 * purge_after, seconds for a bin width). A month is a twelfth of a 365.25-day
 * year (2,629,800 s), so that 12months is a year.
 */
#ifndef IOACCT_DURATION_H
#define IOACCT_DURATION_H

#include <stddef.h>
#include <stdint.h>

enum ioacct_duration_unit {
	IOACCT_DUR_SECONDS,
	IOACCT_DUR_MONTHS,
};

#define IOACCT_SECONDS_PER_MONTH 2629800ULL
/* Longer than any store will hold: 1000 years. */
#define IOACCT_DURATION_MAX_S (1000ULL * 12 * IOACCT_SECONDS_PER_MONTH)

/*
 * Parses s into seconds (> 0). 0, or -EINVAL with a one-line message in
 * err naming the value and the forms accepted.
 */
int ioacct_duration_parse(const char *s, enum ioacct_duration_unit bare_unit, uint64_t *out_s,
			  char *err, size_t errlen);
/* "30days", "48hours", "20s": the shortest exact form of a duration, for logs. */
const char *ioacct_duration_format(uint64_t s, char *buf, size_t len);

#endif /* IOACCT_DURATION_H */
