/* SPDX-License-Identifier: MIT */
/* A session's network (core/session-network.c): who shares one, and the
 * record naming the members a job may join, read back strictly. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "session-network.h"

static JobSpec spec(uid_t owner, const char *session, bool private_network) {
        return (JobSpec) { .owner = owner, .session_id = (char *) session, .private_network = private_network };
}

Test(session_network, who_shares_one) {
        JobSpec a = spec(1000, "web", true), b = spec(1000, "web", true);
        cr_assert(session_network_shared(&a));
        cr_assert(session_network_same(&a, &b));
        JobSpec other_owner = spec(1001, "web", true), other_session = spec(1000, "api", true);
        JobSpec no_session = spec(1000, "", true), host = spec(1000, "web", false);
        cr_assert(!session_network_same(&a, &other_owner));
        cr_assert(!session_network_same(&a, &other_session));
        cr_assert(!session_network_shared(&no_session), "a job of no session has its own");
        cr_assert(!session_network_same(&no_session, &no_session));
        cr_assert(!session_network_same(&a, &host), "a job of the host's network shares none");
}

Test(session_network, the_record_reads_back_what_was_written) {
        NetworkPeer peers[2] = { { .pid = 81, .token = "boot-1102109-3743220" }, { .pid = 7, .token = "boot-2" } };
        char *text = NULL;
        cr_assert_eq(network_peers_format(peers, 2, &text), 0);
        cr_assert_str_eq(text, "81 boot-1102109-3743220\n7 boot-2\n");
        NetworkPeer back[NETWORK_PEERS_MAX];
        size_t n = 0;
        cr_assert_eq(network_peers_parse(text, back, &n), 0);
        cr_assert_eq(n, 2);
        cr_assert_eq(back[0].pid, 81);
        cr_assert_str_eq(back[1].token, "boot-2");
        free(text);
        cr_assert_eq(network_peers_parse("", back, &n), 0);
        cr_assert_eq(n, 0);
}

Test(session_network, anything_else_is_damage) {
        static const char *const bad[] = {
                "81 token",            /* no newline */
                "81\n", " token\n", "x token\n", "0 token\n", "-1 token\n", "81 \n", "81 a b\n",
                "99999999999 token\n", "81 token\n\n",
        };
        NetworkPeer back[NETWORK_PEERS_MAX];
        size_t n;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
                cr_assert_eq(network_peers_parse(bad[i], back, &n), -EBADMSG, "read: '%s'", bad[i]);
        char many[512] = "";
        for (int i = 0; i <= NETWORK_PEERS_MAX; i++)
                strcat(many, "5 t\n");
        cr_assert_eq(network_peers_parse(many, back, &n), -EBADMSG, "more than NETWORK_PEERS_MAX");
        char long_token[PIDREF_TOKEN_MAX + 8] = "5 ";
        memset(long_token + 2, 'a', PIDREF_TOKEN_MAX);
        strcpy(long_token + 2 + PIDREF_TOKEN_MAX, "\n");
        cr_assert_eq(network_peers_parse(long_token, back, &n), -EBADMSG, "a token past PIDREF_TOKEN_MAX");
}
