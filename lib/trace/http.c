// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The OTLP/HTTP client of iotrace --otlp and ioacctd's spans, on libcurl:
 * http:// and https:// (the peer's certificate and name checked, against
 * the system's CAs or the site's file), one connection kept between POSTs,
 * the proxy the environment names (http_proxy, https_proxy, no_proxy), no
 * redirects, every POST within a deadline. The status is the caller's to
 * judge (otlp.c retries what the server says may pass).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "otlp.h"

struct ioacct_http {
	CURL *curl;
	struct curl_slist *headers;
	int64_t retry_after_ms;     /* the last answer's Retry-After; -1: none */
	char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_ret;

/* Once per process, before the first handle: curl_global_init() is not for two threads at once. */
static void global_init(void)
{
	global_ret = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/*
 * Retry-After, in seconds or as an HTTP date (RFC 9110 10.2.3), read here:
 * CURLINFO_RETRY_AFTER needs libcurl 7.66, and RHEL 8 has 7.61.
 */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	static const char name[] = "retry-after:";
	struct ioacct_http *h = arg;
	size_t len = size * n;
	char v[64];

	if (len <= sizeof(name) - 1 || strncasecmp(p, name, sizeof(name) - 1))
		return len;
	snprintf(v, sizeof(v), "%.*s", (int)(len - (sizeof(name) - 1)), p + sizeof(name) - 1);
	v[strcspn(v, "\r\n")] = '\0';
	if (v[strspn(v, " \t")] >= '0' && v[strspn(v, " \t")] <= '9') {
		char *end;
		long long s = strtoll(v, &end, 10);

		if (s >= 0 && *(end + strspn(end, " \t")) == '\0')
			h->retry_after_ms = s > INT64_MAX / 1000 ? INT64_MAX : s * 1000;
	} else {
		time_t at = curl_getdate(v + strspn(v, " \t"), NULL), now = time(NULL);

		if (at != (time_t)-1)
			h->retry_after_ms = at > now ? (int64_t)(at - now) * 1000 : 0;
	}
	return len;
}

/* The answer's body (an ExportTraceServiceResponse, or an error page) is not read. */
static size_t discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

void ioacct_http_free(struct ioacct_http *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	curl_slist_free_all(h->headers);
	free(h);
}

struct ioacct_http *ioacct_http_new(const struct ioacct_url *u, const char *ctype,
				    const char *ca_file, char *err, size_t errlen)
{
	struct ioacct_http *h = calloc(1, sizeof(*h));
	int ret = ENOMEM;
	char line[128];
	CURLcode rc = CURLE_OK;

	if (!h) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_once(&global_once, global_init);
	if (global_ret != CURLE_OK || !(h->curl = curl_easy_init())) {
		snprintf(err, errlen, "libcurl cannot start: %s", curl_easy_strerror(global_ret));
		goto fail;
	}
	snprintf(line, sizeof(line), "Content-Type: %s", ctype);
	h->headers = curl_slist_append(NULL, line);
	/* No "Expect: 100-continue": it costs a round trip (or a second) for nothing here. */
	if (h->headers)
		h->headers = curl_slist_append(h->headers, "Expect:");
	if (!h->headers) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* In threads: no signal for the resolver's timeout (the threaded resolver needs none). */
	rc = curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_URL, u->url);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85: the old form is deprecated */
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_PROTOCOLS,
				      (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_USERAGENT, "ioacct/" PACKAGE_VERSION);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, discard);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, on_header);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, h);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->errbuf);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (!rc && ca_file && ca_file[0])
		rc = curl_easy_setopt(h->curl, CURLOPT_CAINFO, ca_file);
	if (rc) {
		snprintf(err, errlen, "libcurl: %s", curl_easy_strerror(rc));
		ret = rc == CURLE_OUT_OF_MEMORY ? ENOMEM : ENOTSUP;
		goto fail;
	}
	return h;
fail:
	ioacct_http_free(h);
	errno = ret;
	return NULL;
}

/* What failed, said as the hand-written client said it before, and its errno. */
static int failure(struct ioacct_http *h, CURLcode rc, char *err, size_t errlen)
{
	long os_errno = 0;
	const char *why = h->errbuf[0] ? h->errbuf : curl_easy_strerror(rc);

	switch (rc) {
	case CURLE_COULDNT_CONNECT:
		curl_easy_getinfo(h->curl, CURLINFO_OS_ERRNO, &os_errno);
		if (os_errno) {
			snprintf(err, errlen, "connecting: %s", strerror((int)os_errno));
			return -(int)os_errno;
		}
		snprintf(err, errlen, "connecting: %s", why);
		return -ECONNREFUSED;
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(err, errlen, "no answer: %s", strerror(ETIMEDOUT));
		return -ETIMEDOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		snprintf(err, errlen, "%s", why);
		return -EHOSTUNREACH;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
		snprintf(err, errlen, "TLS: %s", why);
		return -EPROTO;
	default:
		snprintf(err, errlen, "%s", why);
		return -EIO;
	}
}

int ioacct_http_post(struct ioacct_http *h, const void *body, size_t len, int timeout_ms,
		     int64_t *retry_after_ms, char *err, size_t errlen)
{
	long status = 0;
	CURLcode rc;

	*retry_after_ms = -1;
	h->retry_after_ms = -1;
	h->errbuf[0] = '\0';
	rc = curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	if (!rc)
		rc = curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	if (!rc)
		rc = curl_easy_perform(h->curl);
	if (rc)
		return failure(h, rc, err, errlen);
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	*retry_after_ms = h->retry_after_ms;
	if (status < 100) {
		snprintf(err, errlen, "no HTTP status in its answer");
		return -EPROTO;
	}
	return (int)status;
}
