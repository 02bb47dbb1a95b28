/* SPDX-License-Identifier: MIT */
#pragma once

/* What the supervisor (socket-mediator.h) and a sandboxed job's socket
 * broker (socket-broker.h) say to each other, on one SOCK_SEQPACKET pair,
 * a message a datagram:
 *   supervisor → broker                 a SocketRequest, its data after it;
 *                                       descriptors: the job's socket, the
 *                                       calling thread's cwd if the address
 *                                       is a relative path, then those the
 *                                       call passes (SCM_RIGHTS)
 *   broker → supervisor                 a SocketReply */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef enum SocketOp {
        SOCKET_OP_CONNECT = 1,
        SOCKET_OP_SENDMSG, /* sendto() and sendmsg() alike */
} SocketOp;

/* What one emulated call may carry: a datagram (and a stream socket's
 * send, which then sends at most this much) of 64 KiB, and descriptors. */
#define SOCKET_DATA_MAX (64U * 1024U)
#define SOCKET_FDS_MAX 32U
#define SOCKET_CONTROL_MAX 256U /* other control messages (IP_PKTINFO, …), as the call gave them */

typedef struct SocketRequest {
        uint64_t cookie;
        uint32_t op;                            /* SocketOp */
        int32_t flags;                          /* the send's flags */
        uint32_t addr_len;                      /* 0: no address */
        uint32_t data_len;                      /* bytes after the request */
        uint32_t n_fds;                         /* passed descriptors after the socket (and cwd) */
        uint32_t control_len;
        bool has_cwd;
        struct sockaddr_storage addr;
        unsigned char control[SOCKET_CONTROL_MAX];
} SocketRequest;

typedef struct SocketReply {
        uint64_t cookie;
        int64_t result; /* the call's return value, or -errno */
} SocketReply;
