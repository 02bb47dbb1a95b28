/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "job.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"
#include "supervisor-spawn.h"
#include "supervisor-spawn-private.h"

/* Supervisors started ahead of time (bgrun-supervisor --pooled): exec'd and
 * linked, each waits on its go pipe for the id of the job it is to run. One
 * taken spares a Launch the supervisor's exec and dynamic linking, and its
 * fsync of the spec then runs while the containment is readied. Refilled
 * only when Launches pause (supervisor_pool_refill()); a burst of them
 * empties the pool and spawns the rest as before. An idle one leaves on EOF
 * of its go pipe, so none outlives bgrund. */
#define SUPERVISOR_POOL_SIZE 4

typedef struct SupervisorPool {
        SpawnedChild *idle[SUPERVISOR_POOL_SIZE];
        unsigned n_idle;
        sd_event_source *refill;
} SupervisorPool;

void supervisor_pool_forget(SpawnedChild *c) {
        SupervisorPool *p = c->runtime->supervisor_pool;
        for (unsigned i = 0; p && i < p->n_idle; i++)
                if (p->idle[i] == c) {
                        p->idle[i] = p->idle[--p->n_idle];
                        break;
                }
        c->pooled = false;
        c->ready_fd = safe_close(c->ready_fd);
        c->go_fd = safe_close(c->go_fd);
}

static int pool_fill_one(Runtime *rt) {
        SupervisorPool *p = rt->supervisor_pool;
        pid_t pid;
        int pidfd, ready_fd, go_fd;
        int r = supervisor_spawn_process(rt, NULL, -EBADF, &pid, &pidfd, &ready_fd, &go_fd);
        if (r < 0)
                return r;
        SpawnedChild *c;
        r = spawned_child_watch(rt, pidfd, "", false, &c);
        if (r < 0) {
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitpid(pid, NULL, 0);
                safe_close(pidfd);
                safe_close(ready_fd);
                safe_close(go_fd);
                return r;
        }
        safe_close(pidfd);
        c->pooled = true;
        c->pid = pid;
        c->ready_fd = ready_fd;
        c->go_fd = go_fd;
        p->idle[p->n_idle++] = c;
        return 0;
}

/* Started one at a time, each once bgrund has neither started nor answered
 * a Launch for a while: a supervisor's start (its exec, its linking) then
 * competes for the CPU with no job's start or end. */
#define POOL_QUIET_USEC (20 * USEC_PER_MSEC)

static int on_pool_refill(sd_event_source *s, uint64_t usec, void *userdata) {
        Runtime *rt = userdata;
        SupervisorPool *p = rt->supervisor_pool;
        int r = p->n_idle < SUPERVISOR_POOL_SIZE ? pool_fill_one(rt) : 0;
        if (r < 0)
                log_debug_errno(r, "Cannot start a supervisor ahead of time: %m");
        if (r >= 0 && p->n_idle < SUPERVISOR_POOL_SIZE) {
                (void) sd_event_source_set_time_relative(s, POOL_QUIET_USEC);
                (void) sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        return 0;
}

void supervisor_pool_refill(Runtime *rt) {
        SupervisorPool *p = rt->supervisor_pool;
        if (!p) {
                p = rt->supervisor_pool = calloc(1, sizeof(SupervisorPool));
                if (!p)
                        return; /* no pool: every Launch spawns its own */
        }
        if (!p->refill) {
                if (sd_event_add_time_relative(rt->event, &p->refill, CLOCK_MONOTONIC, POOL_QUIET_USEC,
                                               USEC_PER_MSEC, on_pool_refill, rt) < 0)
                        return;
        } else
                (void) sd_event_source_set_time_relative(p->refill, POOL_QUIET_USEC);
        (void) sd_event_source_set_enabled(p->refill, SD_EVENT_ONESHOT);
}

/* Hand an idle supervisor job j: for a mechanism whose supervisor must be
 * in the job's cgroup before it is let go, into that cgroup first (knowing
 * no job yet, it has nothing to do with any if that fails), then the job's
 * id down its go pipe. Failing here costs only this supervisor. */
int supervisor_pool_take(Job *j, const SpawnPlan *plan, pid_t *ret_pid, int *ret_pidfd, int *ret_ready_fd,
                         int *ret_go_fd) {
        Runtime *rt = j->runtime;
        SupervisorPool *p = rt->supervisor_pool;
        if (!p || p->n_idle == 0)
                return -EAGAIN;
        SpawnedChild *c = p->idle[p->n_idle - 1];

        _cleanup_close_ int pidfd = fcntl(sd_event_source_get_io_fd(c->source), F_DUPFD_CLOEXEC, 3);
        if (pidfd < 0)
                return negative_errno();
        int r = plan->cgroup_fd >= 0 ? cgroup_attach(plan->cgroup_fd, c->pid) : 0;
        if (r >= 0) {
                char msg[JOB_ID_MAX + 1];
                int n = snprintf(msg, sizeof msg, "%s\n", j->id);
                ssize_t k = write(c->go_fd, msg, (size_t) n);
                r = k == n ? 0 : k < 0 ? negative_errno() : -EIO;
        }
        if (r < 0) {
                /* Unpinned still: reaped as soon as it is seen to die. */
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                supervisor_pool_forget(c);
                return r;
        }
        *ret_pid = c->pid;
        *ret_ready_fd = TAKE_FD(c->ready_fd);
        *ret_go_fd = TAKE_FD(c->go_fd);
        *ret_pidfd = TAKE_FD(pidfd);
        supervisor_pool_forget(c);
        strcpy(c->job_id, j->id);
        c->pinned = plan->pin;
        return 0;
}

void supervisor_pool_free(Runtime *rt) {
        SupervisorPool *p = rt->supervisor_pool;
        if (!p)
                return;
        /* An idle one holds nothing of any job: gone with us, and reaped. */
        while (p->n_idle > 0) {
                SpawnedChild *c = p->idle[0];
                int pidfd = sd_event_source_get_io_fd(c->source);
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                (void) waitid(P_PIDFD, (id_t) pidfd, &(siginfo_t) {}, WEXITED);
                spawned_child_free(c);
        }
        sd_event_source_disable_unref(p->refill);
        free(p);
        rt->supervisor_pool = NULL;
}
