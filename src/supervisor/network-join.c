/* SPDX-License-Identifier: MIT */
/* A member's namespaces, taken only where they are what they must be. The
 * member's main process is held by a pidfd verified against its start
 * token while its /proc/PID/ns files are opened, and checked alive after:
 * a pid reused meanwhile opens nothing that is used. Then the namespace
 * itself is checked, since a member may have made others since it
 * started: a network namespace is joined only when it is not ours, and it
 * is owned by our user namespace (bgrund as root: its jobs' are) or, for
 * an unprivileged bgrund's job, by a user namespace one level below ours
 * that the job's user owns (the one its first process was born in: what a
 * job makes later is deeper still). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "log.h"
#include "macro.h"
#include "pidref.h"
#include "network-join.h"
#include "session-network.h"

static bool same_inode(int a, int b) {
        struct stat sa, sb;
        return fstat(a, &sa) >= 0 && fstat(b, &sb) >= 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Whether netns (and userns) are a member's as the header says. */
static bool namespaces_fit(int netns, int userns, uid_t uid) {
        _cleanup_close_ int own_net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int own_user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int owner = ioctl(netns, NS_GET_USERNS);
        if (own_net < 0 || own_user < 0 || owner < 0 || same_inode(netns, own_net))
                return false;
        if (userns < 0)
                return same_inode(owner, own_user);
        _cleanup_close_ int parent = ioctl(userns, NS_GET_PARENT);
        uid_t owner_uid;
        return same_inode(owner, userns) && parent >= 0 && same_inode(parent, own_user) &&
               ioctl(userns, NS_GET_OWNER_UID, &owner_uid) >= 0 && owner_uid == uid;
}

/* peer's namespaces, if it is still the process named and they fit. */
static bool open_peer(const NetworkPeer *peer, bool user_namespace, uid_t uid, int *ret_netns, int *ret_userns) {
        _cleanup_(pidref_done) PidRef ref = PIDREF_NULL;
        if (pidref_verify(peer->pid, peer->token, &ref) != PIDREF_OWNED)
                return false;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/net", (int) peer->pid);
        _cleanup_close_ int netns = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof path, "/proc/%d/ns/user", (int) peer->pid);
        _cleanup_close_ int userns = user_namespace ? open(path, O_RDONLY | O_CLOEXEC) : -EBADF;
        if (netns < 0 || (user_namespace && userns < 0) || pidref_check(&ref) != PIDREF_OWNED ||
            !namespaces_fit(netns, userns, uid))
                return false;
        *ret_netns = TAKE_FD(netns);
        *ret_userns = TAKE_FD(userns);
        return true;
}

void network_join_done(NetworkJoin *j) {
        j->netns_fd = safe_close(j->netns_fd);
        j->userns_fd = safe_close(j->userns_fd);
}

int network_join_open(int dir_fd, bool user_namespace, uid_t uid, NetworkJoin *ret) {
        NetworkPeer peers[NETWORK_PEERS_MAX];
        size_t n;
        *ret = (NetworkJoin) { .netns_fd = -EBADF, .userns_fd = -EBADF };
        int r = network_peers_read(dir_fd, peers, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (open_peer(&peers[i], user_namespace, uid, &ret->netns_fd, &ret->userns_fd))
                        return 1;
        if (n > 0)
                log_info("None of the %zu members of its session's network named is there to join: "
                         "the job makes it", n);
        return 0;
}
