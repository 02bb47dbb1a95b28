/* SPDX-License-Identifier: MIT */
#include <string.h>
#include <errno.h>
#include <strings.h>

#include "http-request.h"
#include "macro.h"

ssize_t http_head_end(const char *buf, size_t len) {
        for (size_t i = 0; i < len; i++) {
                if (buf[i] != '\n')
                        continue;
                if (i == 0 || buf[i - 1] != '\r')
                        return -EBADMSG; /* a bare LF: no head this proxy takes, however long one waits */
                if (i >= 3 && buf[i - 2] == '\n' && buf[i - 3] == '\r')
                        return (ssize_t) i + 1;
        }
        return 0;
}

static bool is_tchar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

/* A port of 1-5 digits, 1-65535, no leading 0. */
static bool parse_port(const char *p, size_t n, uint16_t *ret) {
        uint32_t v = 0;
        if (n == 0 || n > 5 || p[0] == '0')
                return false;
        for (size_t i = 0; i < n; i++) {
                if (p[i] < '0' || p[i] > '9')
                        return false;
                v = v * 10 + (uint32_t) (p[i] - '0');
        }
        if (v > 65535)
                return false;
        *ret = (uint16_t) v;
        return true;
}

/* authority[0..n) = host[:port] into r (port: default when absent, or
 * required). */
static HttpVerdict parse_authority(const char *a, size_t n, uint16_t default_port, HttpRequest *r, const char **why) {
        const char *colon = memchr(a, ':', n);
        size_t host_len = colon ? (size_t) (colon - a) : n;
        if (memchr(a, '@', n) || (n > 0 && a[0] == '['))
                return *why = "the authority has user info or an IP literal", HTTP_REQUEST_BAD_HOST;
        if (colon ? !parse_port(colon + 1, n - host_len - 1, &r->port) : default_port == 0)
                return *why = "the authority's port", HTTP_REQUEST_BAD;
        if (!colon)
                r->port = default_port;
        if (host_len == 0 || host_len > DOMAIN_NAME_MAX)
                return *why = "the host", HTTP_REQUEST_BAD_HOST;
        for (size_t i = 0; i < host_len; i++) {
                char c = a[i];
                r->host[i] = c >= 'A' && c <= 'Z' ? (char) (c - 'A' + 'a') : c;
        }
        r->host[host_len] = '\0';
        if (!domain_name_valid(r->host))
                return *why = "the host is no name", HTTP_REQUEST_BAD_HOST;
        return HTTP_REQUEST_OK;
}

/* The request line, up to its CRLF at line_end. */
static HttpVerdict parse_request_line(const char *h, size_t line_end, HttpRequest *r, const char **why) {
        const char *sp1 = memchr(h, ' ', line_end);
        if (!sp1 || sp1 == h || (size_t) (sp1 - h) >= sizeof r->method)
                return *why = "the method", HTTP_REQUEST_BAD;
        for (const char *c = h; c < sp1; c++)
                if (*c < 'A' || *c > 'Z')
                        return *why = "the method", HTTP_REQUEST_BAD;
        memcpy(r->method, h, (size_t) (sp1 - h));
        r->method[sp1 - h] = '\0';
        const char *target = sp1 + 1, *end = h + line_end;
        const char *sp2 = memchr(target, ' ', (size_t) (end - target));
        if (!sp2 || sp2 == target || (size_t) (end - sp2) != 9 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
            (sp2[8] != '0' && sp2[8] != '1'))
                return *why = "the request line", HTTP_REQUEST_BAD;
        r->minor = (unsigned) (sp2[8] - '0');
        size_t tlen = (size_t) (sp2 - target);
        for (size_t i = 0; i < tlen; i++)
                if ((unsigned char) target[i] <= ' ' || (unsigned char) target[i] >= 0x7f)
                        return *why = "the target", HTTP_REQUEST_BAD;
        r->connect = streq(r->method, "CONNECT");
        if (r->connect)
                return parse_authority(target, tlen, 0, r, why);
        static const char http[] = "http://";
        if (tlen < sizeof http - 1 || strncasecmp(target, http, sizeof http - 1) != 0)
                return *why = "only CONNECT and http:// requests pass", memchr(target, ':', tlen) && target[0] != '/'
                                                                                ? HTTP_REQUEST_NOT_HTTP
                                                                                : HTTP_REQUEST_BAD;
        const char *auth = target + sizeof http - 1;
        const char *slash = memchr(auth, '/', (size_t) (sp2 - auth));
        const char *q = memchr(auth, '?', (size_t) (sp2 - auth));
        if (q && (!slash || q < slash))
                slash = NULL; /* "http://host?x": no path */
        size_t alen = slash ? (size_t) (slash - auth) : (size_t) (sp2 - auth);
        HttpVerdict v = parse_authority(auth, alen, 80, r, why);
        if (v != HTTP_REQUEST_OK)
                return v;
        r->path = slash ? slash : "/";
        r->path_len = slash ? (size_t) (sp2 - slash) : 1;
        if (!slash && auth + alen != sp2)
                return *why = "the target", HTTP_REQUEST_BAD;
        return HTTP_REQUEST_OK;
}

static bool field_is(const char *name, size_t n, const char *want) {
        return n == strlen(want) && strncasecmp(name, want, n) == 0;
}

bool http_field_is_hop_by_hop(const char *name, size_t n) {
        static const char *const hop[] = { "connection", "proxy-connection", "proxy-authorization",
                                           "proxy-authenticate", "keep-alive", "te", "trailer", "upgrade" };
        for (size_t i = 0; i < ELEMENTSOF(hop); i++)
                if (field_is(name, n, hop[i]))
                        return true;
        return false;
}

/* v[0..n) without the optional whitespace around it. */
static void trim(const char **v, size_t *n) {
        while (*n > 0 && (**v == ' ' || **v == '\t'))
                (*v)++, (*n)--;
        while (*n > 0 && ((*v)[*n - 1] == ' ' || (*v)[*n - 1] == '\t'))
                (*n)--;
}

/* One field of the head. */
static HttpVerdict parse_field(const char *line, size_t n, HttpRequest *r, bool *seen_host, const char **why) {
        const char *colon = memchr(line, ':', n);
        if (!colon || colon == line)
                return *why = "a header field", HTTP_REQUEST_BAD;
        size_t name_len = (size_t) (colon - line);
        for (size_t i = 0; i < name_len; i++)
                if (!is_tchar(line[i]))
                        return *why = "a header field's name", HTTP_REQUEST_BAD;
        const char *v = colon + 1;
        size_t vlen = n - name_len - 1;
        for (size_t i = 0; i < vlen; i++) {
                unsigned char c = (unsigned char) v[i];
                if ((c < ' ' && c != '\t') || c == 0x7f)
                        return *why = "a control byte in a header field", HTTP_REQUEST_BAD;
        }
        trim(&v, &vlen);
        if (field_is(line, name_len, "host")) {
                if (*seen_host)
                        return *why = "Host given twice", HTTP_REQUEST_BAD;
                *seen_host = true;
                HttpRequest h = {};
                uint16_t default_port = r->connect ? r->port : 80;
                if (parse_authority(v, vlen, default_port, &h, why) != HTTP_REQUEST_OK || !streq(h.host, r->host) ||
                    h.port != r->port)
                        return *why = "the Host field is not the target's", HTTP_REQUEST_BAD;
        } else if (field_is(line, name_len, "content-length")) {
                uint64_t x = 0;
                if (r->has_length || vlen == 0 || vlen > 15)
                        return *why = "Content-Length", HTTP_REQUEST_BAD;
                for (size_t i = 0; i < vlen; i++) {
                        if (v[i] < '0' || v[i] > '9')
                                return *why = "Content-Length", HTTP_REQUEST_BAD;
                        x = x * 10 + (uint64_t) (v[i] - '0');
                }
                r->has_length = true;
                r->length = x;
        } else if (field_is(line, name_len, "transfer-encoding")) {
                if (r->chunked)
                        return *why = "Transfer-Encoding given twice", HTTP_REQUEST_BAD;
                if (!field_is(v, vlen, "chunked"))
                        return *why = "a Transfer-Encoding but chunked", HTTP_REQUEST_UNSUPPORTED;
                r->chunked = true;
        }
        return HTTP_REQUEST_OK;
}

HttpVerdict http_request_parse(const char *head, size_t len, HttpRequest *ret, const char **ret_why) {
        HttpRequest r = {};
        const char *why = "";
        HttpVerdict v = HTTP_REQUEST_BAD;
        *ret_why = "the head";
        if (len < 4 || len > HTTP_HEAD_MAX || http_head_end(head, len) != (ssize_t) len)
                return HTTP_REQUEST_BAD;
        /* Every LF ends a line after a CR, every CR is before an LF. */
        for (size_t i = 0; i < len; i++)
                if ((head[i] == '\n' && (i == 0 || head[i - 1] != '\r')) ||
                    (head[i] == '\r' && (i + 1 == len || head[i + 1] != '\n')) || head[i] == '\0')
                        return *ret_why = "a bare CR, LF or NUL", HTTP_REQUEST_BAD;
        const char *eol = memchr(head, '\r', len);
        v = parse_request_line(head, (size_t) (eol - head), &r, &why);
        if (v != HTTP_REQUEST_OK)
                return *ret_why = why, v;
        r.fields = (size_t) (eol - head) + 2;
        bool seen_host = false;
        for (size_t at = r.fields; at < len - 2;) {
                const char *line = head + at, *end = memchr(line, '\r', len - at);
                size_t n = (size_t) (end - line);
                /* obs-fold: a line that begins with a blank is refused. */
                if (n == 0 || line[0] == ' ' || line[0] == '\t')
                        return *ret_why = "a folded header line", HTTP_REQUEST_BAD;
                v = parse_field(line, n, &r, &seen_host, &why);
                if (v != HTTP_REQUEST_OK)
                        return *ret_why = why, v;
                at += n + 2;
        }
        if (r.has_length && r.chunked)
                return *ret_why = "Content-Length with Transfer-Encoding", HTTP_REQUEST_BAD;
        if (!seen_host && r.minor == 1 && !r.connect)
                return *ret_why = "no Host field", HTTP_REQUEST_BAD;
        r.head_len = len;
        *ret = r;
        return HTTP_REQUEST_OK;
}
