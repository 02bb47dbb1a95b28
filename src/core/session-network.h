/* SPDX-License-Identifier: MIT */
#pragma once

/* A session's network (contract: "Network: shared within a session"):
 * PrivateNetwork=yes jobs of one owner and one session, with the same
 * network options, share one network namespace while any of them runs. A
 * job joins the namespace of a running member of its session: bgrund names
 * the members it knows in the job's record (network-peers, each a main
 * process's pid and start token), and the job's supervisor takes the first
 * whose namespace it can verify (supervisor/session-network.c); none: the
 * job makes the session's namespace. Bus-free and pure, but for the file. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "job-record.h"
#include "pidref.h"

#define JOB_NETWORK_PEERS_FILE "network-peers"

/* The most members a job's record names: enough that one exiting meanwhile
 * still leaves one to join. */
#define NETWORK_PEERS_MAX 8

typedef struct NetworkPeer {
        pid_t pid;
        char token[PIDREF_TOKEN_MAX];
} NetworkPeer;

/* Whether a job of s has a session's network (PrivateNetwork=yes in a
 * session), as the record's sandbox.network says: "session", else "own". */
bool session_network_shared(const JobSpec *s);

/* Whether jobs of a and b may share one: the same owner, session and
 * network options (a sibling never gets a looser network through another). */
bool session_network_same(const JobSpec *a, const JobSpec *b);

/* The record's "network-peers" in dir_fd: written (n > 0) or removed. */
int network_peers_write(int dir_fd, const NetworkPeer *peers, size_t n);
/* Read back: up to NETWORK_PEERS_MAX into ret, their count in *ret_n (0 when
 * there is no file); -EBADMSG for a line that is not "PID TOKEN". */
int network_peers_read(int dir_fd, NetworkPeer ret[static NETWORK_PEERS_MAX], size_t *ret_n);

/* The text of peers, and back (what the two above write and read). */
int network_peers_format(const NetworkPeer *peers, size_t n, char **ret);
int network_peers_parse(const char *text, NetworkPeer ret[static NETWORK_PEERS_MAX], size_t *ret_n);
