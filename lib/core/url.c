// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * URLs of outside HTTP servers, checked strictly (see url.h): what libcurl
 * would accept and what it would guess at are not the same thing, and a
 * URL that is wrong must be said where it was written.
 */
#include "url.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util.h"

/* What is wrong, into the caller's err: -EINVAL. */
#define BAD(...) ioacct_seterr(err, errlen, -EINVAL, __VA_ARGS__)

static bool host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.' || c == '_';
}

/* RFC 3986's pchar, '/' and '?' (a query is kept), and %XX escapes. */
static bool path_ok(const char *p)
{
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '%') {
			if (!isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]))
				return false;
			p += 2;
			continue;
		}
		if (isalnum(c) || strchr("-._~!$&'()*+,;=:@/?", c))
			continue;
		return false;
	}
	return true;
}

int ioacct_url_parse(const char *s, const char *default_path, struct ioacct_url *u, char *err,
		     size_t errlen)
{
	const char *h, *end, *colon = NULL, *rest;
	size_t hlen;
	bool v6;
	int n;

	memset(u, 0, sizeof(*u));
	if (!strncasecmp(s, "https://", 8)) {
		u->https = true;
		h = s + 8;
	} else if (!strncasecmp(s, "http://", 7)) {
		h = s + 7;
	} else {
		return BAD("not an http:// or https:// URL");
	}
	end = h + strcspn(h, "/?#");
	if (memchr(h, '@', (size_t)(end - h)))
		return BAD("a user or password in the URL is not allowed (it would be in a "
			   "world-readable file and in the log)");
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));
		struct in6_addr a6;

		if (!rb)
			return BAD("no ']' after the IPv6 address");
		hlen = (size_t)(rb - h - 1);
		if (hlen >= sizeof(u->host))
			return BAD("the host is too long");
		memcpy(u->host, h + 1, hlen);
		if (inet_pton(AF_INET6, u->host, &a6) != 1)
			return BAD("'%s' is not an IPv6 address", u->host);
		if (rb + 1 != end && rb[1] != ':')
			return BAD("text after the IPv6 address's ']'");
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		hlen = (size_t)((colon ? colon : end) - h);
		if (hlen >= sizeof(u->host))
			return BAD("the host is too long");
		memcpy(u->host, h, hlen);
		for (size_t i = 0; i < hlen; i++)
			if (!host_char(u->host[i]))
				return BAD("the host has a character a host name cannot have");
	}
	if (!u->host[0])
		return BAD("no host");
	if (colon) {
		unsigned long port = 0;
		const char *p = colon + 1;

		if (p == end)
			return BAD("no port after ':'");
		for (; p < end; p++) {
			if (!isdigit((unsigned char)*p))
				return BAD("the port is not a number");
			port = port * 10 + (unsigned long)(*p - '0');
			if (port > 65535)
				break;
		}
		if (port < 1 || port > 65535)
			return BAD("port %.*s is out of range (1 .. 65535)", (int)(end - colon - 1),
				   colon + 1);
		u->port = (uint16_t)port;
	} else {
		u->port = u->https ? 443 : 80;
	}
	rest = end;
	if (strchr(rest, '#'))
		return BAD("a fragment ('#') has no place in it");
	/* OTLP/HTTP: a URL without a path gets the signal's default path. */
	if (!*rest || !strcmp(rest, "/"))
		rest = default_path;
	else if (*rest == '?')
		return BAD("a query without a path");
	if (!path_ok(rest))
		return BAD("the path has a space, a control character or a byte a URL must "
			   "escape (write it %%XX)");
	if (strlen(rest) >= sizeof(u->path))
		return BAD("the path is too long");
	memcpy(u->path, rest, strlen(rest) + 1);
	v6 = strchr(u->host, ':') != NULL; /* only an IPv6 address has one */
	n = snprintf(u->url, sizeof(u->url), "%s://%s%s%s:%u%s", u->https ? "https" : "http",
		     v6 ? "[" : "", u->host, v6 ? "]" : "", u->port, u->path);
	if (n < 0 || (size_t)n >= sizeof(u->url))
		return BAD("the URL is too long");
	return 0;
}
