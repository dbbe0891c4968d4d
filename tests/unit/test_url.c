// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lib/core/url.c: the URLs of otlp_url and iotrace --otlp, parsed strictly,
 * each refusal with its reason, and the URL libcurl is given rebuilt from
 * the parts checked.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "url.h"

static void good(const char *s, const char *host, unsigned int port, const char *path,
		 const char *url)
{
	struct ioacct_url u;
	char err[256] = "";

	assert_int_equal(ioacct_url_parse(s, "/v1/traces", &u, err, sizeof(err)), 0);
	assert_string_equal(u.host, host);
	assert_int_equal(u.port, port);
	assert_string_equal(u.path, path);
	assert_string_equal(u.url, url);
}

static void bad(const char *s, const char *why)
{
	struct ioacct_url u;
	char err[256] = "";

	assert_int_equal(ioacct_url_parse(s, "/v1/traces", &u, err, sizeof(err)), -EINVAL);
	if (!strstr(err, why))
		fail_msg("%s: '%s' does not say '%s'", s, err, why);
}

static void test_good(void **state)
{
	(void)state;
	good("http://localhost:4318", "localhost", 4318, "/v1/traces",
	     "http://localhost:4318/v1/traces");
	good("http://10.0.0.1/", "10.0.0.1", 80, "/v1/traces", "http://10.0.0.1:80/v1/traces");
	good("https://otel.site.example", "otel.site.example", 443, "/v1/traces",
	     "https://otel.site.example:443/v1/traces");
	good("HTTPS://c:1/otlp/x?tenant=a%20b", "c", 1, "/otlp/x?tenant=a%20b",
	     "https://c:1/otlp/x?tenant=a%20b");
	good("http://[::1]:9/otlp/x", "::1", 9, "/otlp/x", "http://[::1]:9/otlp/x");
	good("http://[::1]", "::1", 80, "/v1/traces", "http://[::1]:80/v1/traces");
	good("http://c:65535/", "c", 65535, "/v1/traces", "http://c:65535/v1/traces");
}

static void test_bad(void **state)
{
	(void)state;
	bad("h:4318", "not an http:// or https:// URL");
	bad("ftp://h/", "not an http:// or https:// URL");
	bad("http://h:0", "port 0 is out of range");
	bad("http://127.0.0.1:99999", "port 99999 is out of range");
	bad("http://h:123456789012345678901234567890", "out of range");
	bad("http://h:", "no port after ':'");
	bad("http://h:x", "the port is not a number");
	bad("http://:80", "no host");
	bad("http://", "no host");
	bad("http://[::1", "no ']' after the IPv6 address");
	bad("http://[::1]x:80", "text after the IPv6 address's ']'");
	bad("http://[fe80::1%eth0]:80", "is not an IPv6 address");
	bad("http://[nope]:80", "is not an IPv6 address");
	bad("http://u:pw@h:80/", "a user or password in the URL is not allowed");
	bad("http://u@h/", "a user or password in the URL is not allowed");
	bad("http://h/a b", "the path has a space");
	bad("http://h/a\nb", "control character");
	bad("http://h/a\xff", "a byte a URL must escape");
	bad("http://h/%zz", "a byte a URL must escape");
	bad("http://h/x#frag", "a fragment");
	bad("http://h?x=1", "a query without a path");
	bad("http://h\xc3\xa9/", "a character a host name cannot have");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
