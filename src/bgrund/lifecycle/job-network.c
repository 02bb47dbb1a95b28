/* SPDX-License-Identifier: MIT */
/* The members of a session's network a starting job may join: those of its
 * owner's session group (job-queue.c) that run (their command was exec'd
 * and their supervisor is watched) with the same network options, by their
 * main process, which is in the namespace. Bounded: NETWORK_PEERS_MAX,
 * newest first (the likeliest still to run). */
#include <string.h>

#include "job-network.h"
#include "job-queue.h"
#include "session-network.h"

int job_network_prepare(Job *j) {
        const JobSpec *spec = &j->live->spec;
        if (!session_network_shared(spec))
                return 0;
        NetworkPeer peers[NETWORK_PEERS_MAX];
        size_t n = 0;
        SessionGroup *g = queue_session(j->runtime, j->owner, spec->session_id);
        for (Job *m = g ? g->members.tail : NULL; m && n < NETWORK_PEERS_MAX; m = m->group_prev) {
                /* Running, not ending: its processes are there, in it. */
                bool running = m->state >= JOB_STATE_RUNNING && m->state <= JOB_STATE_KILLING;
                if (m == j || !running || !m->live || !m->live->run || !session_network_same(&m->live->spec, spec))
                        continue;
                peers[n].pid = m->live->run->pid;
                memcpy(peers[n].token, m->live->run->start_token, sizeof peers[n].token);
                n++;
        }
        return network_peers_write(j->live->dir_fd, peers, n);
}
