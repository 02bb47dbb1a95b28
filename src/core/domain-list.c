/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "domain-list.h"
#include "macro.h"

static bool is_label_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* The number of labels of the name s[0..len), or 0 when it is not one. */
static unsigned name_labels(const char *s, size_t len) {
        if (len == 0 || len > DOMAIN_NAME_MAX)
                return 0;
        unsigned labels = 0;
        bool digits_only = true;
        for (size_t i = 0; i < len;) {
                size_t n = 0;
                digits_only = true;
                while (i + n < len && s[i + n] != '.') {
                        if (!is_label_char(s[i + n]))
                                return 0;
                        digits_only = digits_only && s[i + n] >= '0' && s[i + n] <= '9';
                        n++;
                }
                if (n == 0 || n > 63 || s[i] == '-' || s[i + n - 1] == '-')
                        return 0;
                labels++;
                i += n;
                if (i < len && ++i == len)
                        return 0; /* a trailing dot */
        }
        /* No top-level domain is all digits: an IPv4 literal's last is. */
        return digits_only ? 0 : labels;
}

bool domain_name_valid(const char *s) {
        return name_labels(s, strlen(s)) > 0;
}

/* e's name part (after "*." for a wildcard), its length, and its port (0: none). */
static bool entry_parts(const char *e, bool *ret_wildcard, const char **ret_name, size_t *ret_len, uint16_t *ret_port) {
        bool wildcard = e[0] == '*' && e[1] == '.';
        const char *name = e + (wildcard ? 2 : 0), *colon = strchr(name, ':');
        size_t len = colon ? (size_t) (colon - name) : strlen(name);
        uint32_t port = 0;
        if (colon) {
                const char *p = colon + 1;
                if (!*p || strlen(p) > 5 || *p == '0')
                        return false;
                for (; *p; p++) {
                        if (*p < '0' || *p > '9')
                                return false;
                        port = port * 10 + (uint32_t) (*p - '0');
                }
                if (port < 1 || port > 65535)
                        return false;
        }
        unsigned labels = name_labels(name, len);
        /* *.host: at least two labels after "*." (no *.com). */
        if (labels == 0 || (wildcard && labels < 2))
                return false;
        *ret_wildcard = wildcard;
        *ret_name = name;
        *ret_len = len;
        *ret_port = (uint16_t) port;
        return true;
}

bool domain_entry_valid(const char *e) {
        bool wildcard;
        const char *name;
        size_t len;
        uint16_t port;
        return strlen(e) <= DOMAIN_ENTRY_MAX && entry_parts(e, &wildcard, &name, &len, &port);
}

bool domain_list_allows(char *const *list, const char *host, uint16_t port, bool *ret_exact) {
        size_t host_len = strlen(host);
        bool allowed = false, exact = false;
        for (size_t i = 0; list && list[i]; i++) {
                bool wildcard;
                const char *name;
                size_t len;
                uint16_t entry_port;
                if (!entry_parts(list[i], &wildcard, &name, &len, &entry_port))
                        continue;
                if (entry_port ? port != entry_port : port != 80 && port != 443)
                        continue;
                if (!wildcard && host_len == len && memcmp(host, name, len) == 0)
                        allowed = exact = true;
                /* A subdomain: ".name" ends it, with a label before. */
                else if (wildcard && host_len > len + 1 && host[host_len - len - 1] == '.' &&
                         memcmp(host + host_len - len, name, len) == 0)
                        allowed = true;
        }
        if (ret_exact)
                *ret_exact = exact;
        return allowed;
}
