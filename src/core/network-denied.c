/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "network-denied.h"

void network_denied_add(NetworkDenied *d, const char *host) {
        if (!host || !domain_name_valid(host)) {
                d->invalid++;
                return;
        }
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->hosts[i].host, host)) {
                        d->hosts[i].count++;
                        return;
                }
        if (d->n == NETWORK_DENIED_MAX) {
                d->other++;
                return;
        }
        strcpy(d->hosts[d->n].host, host); /* valid: at most DOMAIN_NAME_MAX bytes */
        d->hosts[d->n++].count = 1;
}

size_t network_denied_format(const NetworkDenied *d, char *buf, size_t size) {
        size_t len = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < d->n + 2; i++) {
                const char *host = i < d->n ? d->hosts[i].host : i == d->n ? NETWORK_DENIED_OTHER : NETWORK_DENIED_INVALID;
                uint64_t count = i < d->n ? d->hosts[i].count : i == d->n ? d->other : d->invalid;
                if (count == 0)
                        continue;
                int n = snprintf(buf + len, size - len, "%" PRIu64 " %s\n", count, host);
                if (n < 0 || (size_t) n >= size - len)
                        break; /* a buffer of NETWORK_DENIED_FILE_MAX + 1: never */
                len += (size_t) n;
        }
        return len;
}

int network_denied_parse(const char *text, int (*each)(const char *host, uint64_t count, void *userdata),
                         void *userdata) {
        size_t lines = 0;
        for (const char *p = text; *p; lines++) {
                const char *eol = strchr(p, '\n');
                if (!eol || lines == NETWORK_DENIED_MAX + 2)
                        return -EBADMSG;
                char *end;
                errno = 0;
                if (*p < '1' || *p > '9')
                        return -EBADMSG;
                unsigned long long count = strtoull(p, &end, 10);
                if (errno != 0 || *end != ' ')
                        return -EBADMSG;
                char host[DOMAIN_NAME_MAX + 1];
                size_t len = (size_t) (eol - end - 1);
                if (len == 0 || len > DOMAIN_NAME_MAX)
                        return -EBADMSG;
                memcpy(host, end + 1, len);
                host[len] = '\0';
                if (!domain_name_valid(host) && !streq(host, NETWORK_DENIED_OTHER) && !streq(host, NETWORK_DENIED_INVALID))
                        return -EBADMSG;
                int r = each(host, count, userdata);
                if (r < 0)
                        return r;
                p = eol + 1;
        }
        return 0;
}

int network_denied_write(int dir_fd, const NetworkDenied *d) {
        _cleanup_free_ char *buf = malloc(NETWORK_DENIED_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        size_t len = network_denied_format(d, buf, NETWORK_DENIED_FILE_MAX + 1);
        return write_file_atomic_at(dir_fd, JOB_NETWORK_DENIED_FILE, buf, len, 0600, 0);
}

int network_denied_read(int dir_fd, char **ret) {
        int r = read_file_at(dir_fd, JOB_NETWORK_DENIED_FILE, NETWORK_DENIED_FILE_MAX, ret, NULL);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        return r;
}
