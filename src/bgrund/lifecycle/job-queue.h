/* SPDX-License-Identifier: MIT */
#pragma once

/* The queue (Launch's Queue and MaxParallel), as bookkeeping: each owner's
 * queued jobs in launch order, and for each session of an owner its live
 * jobs, how many of them count as running and the smallest MaxParallel
 * among them. A job waits while starting it would pass its owner's
 * MaxRunningJobs= or its session's MaxParallel; the runtime (runtime.c)
 * starts the waiting ones, oldest first, from a deferred event source that
 * queue_wake() arms when room may have come. A session held by its limit is
 * passed over, never holding back its owner's other sessions, so a start
 * costs O(1) when the head may start and at worst a walk of that owner's own
 * queue (at most MaxQueuedJobs=), never of other owners' jobs or of records.
 * No job is started or ended here. */

#include <stdbool.h>
#include <stdint.h>

#include "job.h"
#include "list.h"
#include "map.h"
#include "owner.h"

typedef struct SessionGroup {
        MapNode node;       /* Owner.sessions */
        Owner *owner;
        char *name;
        unsigned running;   /* its jobs that count as running (job_counts_running) */
        unsigned queued;    /* its jobs in their owner's queue */
        /* Its MaxParallel: the newest launch's that named one, 0: none.
         * It holds while the group does (a job of it is queued or
         * running); a job that names none inherits it (runtime_launch()),
         * so the newest member carries it across a restart. */
        uint32_t limit;
        uint64_t limit_at;  /* created_at of the job that set it */
        QUEUE(Job) members; /* its live jobs, queued or not (Job.group_next) */
} SessionGroup;

/* j, live and entering the table, joins its session's group (made when it
 * is the first): -ENOMEM, else 0. A queued j also enters its owner's queue,
 * at the tail. */
int queue_join(Runtime *rt, Job *j);
/* j leaves its group (it ended, or leaves the table), and its owner's queue
 * if it is in it; a group left empty is freed. */
void queue_leave(Runtime *rt, Job *j);
/* j starts or stops counting as running (runtime_count_running()). */
void queue_count_running(Job *j, bool on);
/* j, queued until now, leaves its owner's queue (it starts or ends). */
void queue_remove(Runtime *rt, Job *j);

/* Why a job of spec may not start now: 0 it may; BGRUN_ERROR(TOO_MANY_RUNNING)
 * (its owner's MaxRunningJobs=) or LAUNCH_TOO_MANY_PARALLEL (its session's
 * MaxParallel), with the limit that holds in *ret_limit. */
int queue_check_room(Runtime *rt, const JobSpec *spec, uint64_t *ret_limit);
/* Whether the queued j may start now. */
bool queue_may_start(Runtime *rt, const Job *j);

/* The group of owner's session, or NULL when it has no live job. */
SessionGroup *queue_session(Runtime *rt, uid_t owner, const char *session);

/* j's place in its owner's queue, 1 first; 0 when it is not queued. */
unsigned queue_position(const Job *j);

/* Room may have come for o's queue: it joins the owners the runtime's
 * deferred source looks at (Runtime.ready_owners), once, soon. */
void queue_wake(Runtime *rt, Owner *o);
/* Whether o is on that list (its queue may start jobs now). */
static inline bool queue_is_ready(const Owner *o) {
        return o->ready;
}
/* Take o off that list (the caller starts what it may now). */
void queue_unready(Runtime *rt, Owner *o);

/* Free every group and empty the ready list (bgrund's end, once its jobs are freed). */
void queue_clear(Runtime *rt);
