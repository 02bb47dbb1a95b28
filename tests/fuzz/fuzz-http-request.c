/* SPDX-License-Identifier: MIT */
/* A job's proxy reading what its client sends (src/proxy): where a request
 * head ends (http_head_end()), the head itself (http_request_parse()), and
 * a chunked body after it (chunked_feed()), which a hostile job writes byte
 * for byte.
 *
 * Input: the bytes the client sent. Invariants: a head ends just past
 * "\r\n\r\n", never after a bare LF; a head taken names a host the list
 * could hold (domain_name_valid()), a port, a target inside the head and
 * never both Content-Length and chunked; a chunked body fed in pieces of
 * any size ends at the same byte and takes no byte past its end, whatever
 * the pieces. */
#include <errno.h>
#include <sys/types.h>

#include "chunked.h"
#include "domain-list.h"
#include "fuzz.h"
#include "http-request.h"

/* Feed body in pieces of step bytes: how many were the body's (-1: bad),
 * *ret_done once it ended. */
static ssize_t feed(const char *body, size_t len, size_t step, bool *ret_done) {
        Chunked c = {};
        size_t taken = 0;
        *ret_done = false;
        for (size_t at = 0; at < len && !*ret_done; at += step) {
                size_t n = len - at < step ? len - at : step;
                ssize_t k = chunked_feed(&c, body + at, n, ret_done);
                if (k < 0)
                        return -1;
                FUZZ_CHECK((size_t) k <= n, "took %zd of %zu bytes", k, n);
                FUZZ_CHECK(*ret_done || (size_t) k == n, "took %zd of %zu bytes and did not end", k, n);
                taken += (size_t) k;
        }
        return (ssize_t) taken;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size > 2 * HTTP_HEAD_MAX)
                return 0;
        const char *buf = (const char *) data;
        ssize_t end = http_head_end(buf, size);
        FUZZ_CHECK(end == 0 || end == -EBADMSG || (end >= 4 && (size_t) end <= size), "head end %zd of %zu", end, size);
        if (end <= 0)
                return 0;
        FUZZ_CHECK(memcmp(buf + end - 4, "\r\n\r\n", 4) == 0, "a head ending at %zd without an empty line", end);
        FUZZ_CHECK(http_head_end(buf, (size_t) end) == end, "the head alone ends elsewhere");
        if ((size_t) end > HTTP_HEAD_MAX)
                return 0; /* refused (431) before it is parsed */

        HttpRequest r;
        const char *why = NULL;
        HttpVerdict v = http_request_parse(buf, (size_t) end, &r, &why);
        FUZZ_CHECK(why != NULL, "no reason");
        if (v != HTTP_REQUEST_OK)
                return 0;
        FUZZ_CHECK(domain_name_valid(r.host), "host '%s' taken", r.host);
        FUZZ_CHECK(r.port > 0, "port 0 taken");
        FUZZ_CHECK(!(r.has_length && r.chunked), "Content-Length and chunked both taken");
        FUZZ_CHECK(r.fields > 0 && r.fields <= (size_t) end, "fields at %zu of %zd", r.fields, end);
        /* "http://host" has the path "/", which is not in the head. */
        if (!r.connect)
                FUZZ_CHECK(r.path_len > 0 && r.path[0] == '/' &&
                           (r.path_len == 1 || (r.path >= buf && r.path + r.path_len <= buf + end)),
                           "target outside the head or not origin-form");
        if (!r.chunked)
                return 0;

        /* The body after the head: the same end whatever the pieces. */
        const char *body = buf + end;
        size_t len = size - (size_t) end;
        bool done_whole, done;
        ssize_t whole = feed(body, len, len ? len : 1, &done_whole);
        static const size_t steps[] = { 1, 2, 3, 7, 64 };
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
                ssize_t k = feed(body, len, steps[i], &done);
                if (whole < 0) {
                        FUZZ_CHECK(k < 0 || !done, "bad whole, but taken in pieces of %zu", steps[i]);
                        continue;
                }
                if (k < 0) {
                        FUZZ_CHECK(false, "good whole (%zd bytes), bad in pieces of %zu", whole, steps[i]);
                }
                FUZZ_CHECK(done == done_whole && (!done || k == whole),
                           "whole: %zd bytes, done %d; in pieces of %zu: %zd, done %d", whole, done_whole, steps[i], k, done);
        }
        return 0;
}
