/* SPDX-License-Identifier: MIT */
#pragma once

/* A request head to a job's proxy, read strictly (RFC 9112, and what a
 * forward proxy must refuse): "CONNECT host:port" or an absolute-form
 * "http://host[:port]/path" request of HTTP/1.0 or 1.1, whose Host header,
 * if any, is the target's; no line folding, no bare CR or LF, no control
 * byte in a field, a Content-Length of digits given once, Transfer-Encoding
 * only "chunked" and never with Content-Length (request smuggling). The
 * host is lower-cased, checked as a name (domain-list.h) and never
 * resolved here. Pure: the proxy and its fuzz target drive it alone. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "domain-list.h"

/* The longest request head taken: past it, 431. */
#define HTTP_HEAD_MAX (16 * 1024)

typedef enum HttpVerdict {
        HTTP_REQUEST_OK,
        HTTP_REQUEST_BAD,          /* 400: not a request this proxy takes */
        HTTP_REQUEST_BAD_HOST,     /* 400: the host is no name a list can hold (an IP literal, ...) */
        HTTP_REQUEST_NOT_HTTP,     /* 400: an absolute-form target of a scheme but http */
        HTTP_REQUEST_UNSUPPORTED,  /* 501: a Transfer-Encoding but chunked */
} HttpVerdict;

typedef struct HttpRequest {
        bool connect;              /* CONNECT: a tunnel, not a request to forward */
        char method[16];
        char host[DOMAIN_NAME_MAX + 1]; /* lower-case */
        uint16_t port;
        const char *path;          /* absolute-form: the origin-form target ("/..."), in the head */
        size_t path_len;
        unsigned minor;            /* HTTP/1.<minor> */
        bool has_length, chunked;  /* the body: Content-Length bytes, chunked, or none */
        uint64_t length;
        size_t fields;             /* where the header fields start, in the head */
        size_t head_len;           /* the head with its empty line */
} HttpRequest;

/* The head ends here: the offset just past its "\r\n\r\n" in buf, 0 while
 * it is not complete, -EBADMSG once an LF came without its CR. */
ssize_t http_head_end(const char *buf, size_t len);

/* Parse head[0..len) (a whole head, http_head_end()'s length). *ret_why:
 * a short reason for a refusal (static). */
HttpVerdict http_request_parse(const char *head, size_t len, HttpRequest *ret, const char **ret_why);

/* Whether field name[0..n) is one a forward proxy must not pass on
 * (hop-by-hop: Connection, Proxy-*, Keep-Alive, TE, Trailer, Upgrade). */
bool http_field_is_hop_by_hop(const char *name, size_t n);
