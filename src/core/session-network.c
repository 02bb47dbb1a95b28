/* SPDX-License-Identifier: MIT */
/* A session's network: who shares one, and the record that names the
 * members a job may join (session-network.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "session-network.h"
#include "strv.h"

bool session_network_shared(const JobSpec *s) {
        return s->private_network && s->session_id && s->session_id[0];
}

bool session_network_same(const JobSpec *a, const JobSpec *b) {
        return session_network_shared(a) && session_network_shared(b) && a->owner == b->owner &&
               streq(a->session_id, b->session_id) && strv_equal(a->allowed_domains, b->allowed_domains);
}

int network_peers_format(const NetworkPeer *peers, size_t n, char **ret) {
        size_t len = 1;
        for (size_t i = 0; i < n; i++)
                len += 12 + strlen(peers[i].token) + 1;
        char *text = malloc(len), *p = text;
        if (!text)
                return -ENOMEM;
        *p = '\0';
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%d %s\n", (int) peers[i].pid, peers[i].token);
        *ret = text;
        return 0;
}

int network_peers_parse(const char *text, NetworkPeer ret[static NETWORK_PEERS_MAX], size_t *ret_n) {
        size_t n = 0;
        for (const char *line = text; *line; ) {
                size_t len = strcspn(line, "\n");
                if (line[len] != '\n' || n == NETWORK_PEERS_MAX)
                        return -EBADMSG;
                const char *space = memchr(line, ' ', len);
                size_t token_len = space ? len - (size_t) (space + 1 - line) : 0;
                char pid_text[16];
                if (!space || space == line || (size_t) (space - line) >= sizeof pid_text || token_len == 0 ||
                    token_len >= PIDREF_TOKEN_MAX)
                        return -EBADMSG;
                memcpy(pid_text, line, (size_t) (space - line));
                pid_text[space - line] = '\0';
                uint64_t pid;
                if (parse_uint64_strict(pid_text, &pid, NULL) < 0 || pid < 1 || pid > INT32_MAX)
                        return -EBADMSG;
                ret[n].pid = (pid_t) pid;
                memcpy(ret[n].token, space + 1, token_len);
                ret[n].token[token_len] = '\0';
                if (strchr(ret[n].token, ' '))
                        return -EBADMSG;
                n++;
                line += len + 1;
        }
        *ret_n = n;
        return 0;
}

int network_peers_write(int dir_fd, const NetworkPeer *peers, size_t n) {
        if (n == 0)
                return unlinkat(dir_fd, JOB_NETWORK_PEERS_FILE, 0) < 0 && errno != ENOENT ? -errno : 0;
        _cleanup_free_ char *text = NULL;
        int r = network_peers_format(peers, n, &text);
        if (r < 0)
                return r;
        return write_file_atomic_at(dir_fd, JOB_NETWORK_PEERS_FILE, text, strlen(text), 0600, 0);
}

int network_peers_read(int dir_fd, NetworkPeer ret[static NETWORK_PEERS_MAX], size_t *ret_n) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_file_at(dir_fd, JOB_NETWORK_PEERS_FILE, NETWORK_PEERS_MAX * (12 + PIDREF_TOKEN_MAX + 1), &text,
                             &len);
        if (r == -ENOENT) {
                *ret_n = 0;
                return 0;
        }
        if (r < 0)
                return r;
        if (strlen(text) != len)
                return -EBADMSG;
        return network_peers_parse(text, ret, ret_n);
}
