/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/pidfd.h>

#include "macro.h"
#include "process-tree.h"

/* 'state', 'ppid' and 'pgrp' from /proc/PID/stat; the comm field may hold
 * anything, so parse after its last ')'. */
static int read_stat(pid_t pid, char *ret_state, pid_t *ret_ppid, pid_t *ret_pgrp) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read(fd, buf, sizeof buf - 1);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        int ppid, pgrp;
        if (!p || sscanf(p + 1, " %c %d %d", ret_state, &ppid, &pgrp) != 3)
                return -EBADMSG;
        *ret_ppid = ppid;
        if (ret_pgrp)
                *ret_pgrp = pgrp;
        return 0;
}

/* Each level holds a directory, a pidfd and about 8 KiB of stack. Past this
 * depth a process is killed without walking below it: its children become
 * ours (we are their subreaper) and the caller's next pass finds them. */
#define WALK_DEPTH_MAX 64

/* sig 0: count only. SIGKILL: stop each one first so it cannot fork while
 * we walk below it. Any other signal goes as it is, so that a handler runs,
 * and to a parent before its children: a shell must have its trap's signal
 * before the command it waits for dies of it and it runs on to its end. */
static int signal_children_of(pid_t parent, unsigned depth, int sig, pid_t except) {
        if (depth >= WALK_DEPTH_MAX)
                return 0;

        char path[64];
        snprintf(path, sizeof path, "/proc/%d/task", (int) parent);
        DIR *tasks = opendir(path);
        if (!tasks)
                return 0; /* the parent is gone: its children went to us */

        int found = 0;
        struct dirent *t;
        while ((t = readdir(tasks))) {
                if (t->d_name[0] == '.')
                        continue;
                char cpath[300], list[8192];
                snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int) parent, t->d_name);
                int fd = open(cpath, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                ssize_t n = read(fd, list, sizeof list - 1);
                close(fd);
                if (n <= 0)
                        continue;
                list[n] = '\0';

                char *save = NULL;
                for (char *tok = strtok_r(list, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
                        pid_t pid = (pid_t) atoi(tok);
                        if (pid <= 0 || pid == except)
                                continue;
                        _cleanup_close_ int pidfd = pidfd_open(pid, 0);
                        if (pidfd < 0)
                                continue;
                        char state;
                        pid_t ppid;
                        /* Pinned now; is it still the child we read? */
                        if (read_stat(pid, &state, &ppid, NULL) < 0 || ppid != parent)
                                continue;
                        if (state == 'Z')
                                continue;
                        if (sig == SIGKILL)
                                (void) pidfd_send_signal(pidfd, SIGSTOP, NULL, 0);
                        else if (sig != 0)
                                (void) pidfd_send_signal(pidfd, sig, NULL, 0);
                        int r = signal_children_of(pid, depth + 1, sig, except);
                        if (r > 0)
                                found += r;
                        if (sig == SIGKILL)
                                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                        found++;
                }
        }
        closedir(tasks);
        return found;
}

int process_tree_kill_descendants(void) {
        return signal_children_of(getpid(), 0, SIGKILL, 0);
}

int process_tree_signal_descendants(int sig, pid_t except) {
        return signal_children_of(getpid(), 0, sig, except);
}

bool process_group_has_members(pid_t pgid) {
        DIR *dir = opendir("/proc");
        if (!dir)
                return true;
        bool found = false;
        struct dirent *de;
        while (!found && (de = readdir(dir))) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                char state;
                pid_t ppid, pgrp;
                if (read_stat((pid_t) atoi(de->d_name), &state, &ppid, &pgrp) >= 0 && pgrp == pgid && state != 'Z')
                        found = true;
        }
        closedir(dir);
        return found;
}

#ifndef PIDFD_SIGNAL_PROCESS_GROUP
#define PIDFD_SIGNAL_PROCESS_GROUP (1U << 2)
#endif

int process_group_kill_by_leader(int leader_pidfd, pid_t pgid, int sig) {
        /* The kernel does it from the leader's pidfd (6.9 and later). */
        if (pidfd_send_signal(leader_pidfd, sig, NULL, PIDFD_SIGNAL_PROCESS_GROUP) >= 0)
                return 1;
        if (errno != EINVAL)
                return negative_errno();

        /* Else each member through its own pidfd, checked to be in the group
         * after it was pinned, so a recycled pid is never signalled. */
        DIR *dir = opendir("/proc");
        if (!dir)
                return negative_errno();
        int n = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                pid_t pid = (pid_t) atoi(de->d_name);
                char state;
                pid_t ppid, pgrp;
                if (read_stat(pid, &state, &ppid, &pgrp) < 0 || pgrp != pgid)
                        continue;
                _cleanup_close_ int pidfd = pidfd_open(pid, 0);
                if (pidfd < 0 || read_stat(pid, &state, &ppid, &pgrp) < 0 || pgrp != pgid || state == 'Z')
                        continue;
                if (pidfd_send_signal(pidfd, sig, NULL, 0) >= 0)
                        n++;
        }
        closedir(dir);
        return n;
}
