/* SPDX-License-Identifier: MIT */
#pragma once

/* The record's network_denied (contract: "Network: shared within a
 * session, and by name"): the hosts a job's proxy refused, with counts. Its
 * supervisor tallies what the proxy reports (valid host names only, at most
 * NETWORK_DENIED_MAX of them, the rest under "(other)", requests naming no
 * host under "(invalid)") and keeps it in the job's directory, a line
 * "COUNT HOST" each, at most once a second; bgrund reads it for the record,
 * checking every line again. Pure, but for the file. */

#include <stddef.h>
#include <stdint.h>

#include "domain-list.h"

#define JOB_NETWORK_DENIED_FILE "network-denied"
#define NETWORK_DENIED_MAX 64
#define NETWORK_DENIED_OTHER "(other)"
#define NETWORK_DENIED_INVALID "(invalid)"
/* The file's most bytes: every line at its longest. */
#define NETWORK_DENIED_FILE_MAX ((NETWORK_DENIED_MAX + 2) * (20 + 1 + DOMAIN_NAME_MAX + 1))

typedef struct NetworkDenied {
        size_t n;
        struct {
                uint64_t count;
                char host[DOMAIN_NAME_MAX + 1];
        } hosts[NETWORK_DENIED_MAX];
        uint64_t other, invalid;
} NetworkDenied;

/* One refusal of host (NULL, or not a valid name: "(invalid)"). */
void network_denied_add(NetworkDenied *d, const char *host);

/* d as the file holds it, into buf (at least NETWORK_DENIED_FILE_MAX + 1
 * bytes); its length. */
size_t network_denied_format(const NetworkDenied *d, char *buf, size_t size);

/* The file's text back: each line's host and count to each(); a line that
 * is not one the format makes is -EBADMSG, and nothing after it is read. */
int network_denied_parse(const char *text, int (*each)(const char *host, uint64_t count, void *userdata),
                         void *userdata);

/* The job's file in dir_fd: written (atomically), or read into a malloc'd
 * text (*ret NULL when there is none). */
int network_denied_write(int dir_fd, const NetworkDenied *d);
int network_denied_read(int dir_fd, char **ret);
