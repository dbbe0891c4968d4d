/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The URL of an outside HTTP server (the OpenTelemetry collector of
 * otlp_url and iotrace --otlp), parsed once, strictly, where it is given:
 * ioacct.conf refuses a bad one at start, with its file, line and key, not
 * per job later. The client (libcurl, lib/trace/http.c) is then given the
 * URL rebuilt from the parts checked here.
 */
#ifndef IOACCT_URL_H
#define IOACCT_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ioacct_url {
	bool https;
	char host[256];          /* a name, an IPv4 address, or an IPv6 one without brackets */
	uint16_t port;           /* the URL's, else 80 or 443 */
	char path[1024];         /* from its '/', with the query if any */
	char url[1400];          /* scheme://host:port/path, what the client is given */
};

/*
 * Parses http[s]://HOST[:PORT][/PATH]: HOST a name (letters, digits, '-',
 * '.', '_'), an IPv4 address or [IPv6]; PORT 1..65535; no user or password
 * (the configuration file is world-readable and URLs go to the log), no
 * fragment, no space or control character. A URL without a path (or "/")
 * gets default_path. 0, or -EINVAL with what is wrong in err.
 */
int ioacct_url_parse(const char *s, const char *default_path, struct ioacct_url *u, char *err,
		     size_t errlen);

#endif /* IOACCT_URL_H */
