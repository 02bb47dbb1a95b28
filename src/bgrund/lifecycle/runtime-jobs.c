/* SPDX-License-Identifier: MIT */
/* The runtime's jobs: in its table and queues, counted for their owners,
 * their records' one-entry cache, and the notifier told of RunningJobs.
 * What a job's life calls of the runtime is here, below it, so that the
 * lifecycle's files do not call back into Launch (runtime.c). */
#include <assert.h>

#include "cgroup.h"
#include "job.h"
#include "job-store.h"
#include "job-queue.h"
#include "list.h"
#include "macro.h"
#include "network-denied.h"
#include "runtime.h"

void runtime_set_notifier(Runtime *rt, const JobNotifier *notifier, void *userdata) {
        rt->notifier = notifier;
        rt->notifier_data = userdata;
}

void runtime_notify_running_jobs(Runtime *rt) {
        if (rt->notifier)
                rt->notifier->running_jobs_changed(rt->notifier_data);
}

Job *runtime_find_job(Runtime *rt, const char *id) {
        return job_table_get(&rt->jobs, id);
}

Job *runtime_find_request(Runtime *rt, uid_t owner, const char *request_id) {
        return job_table_get_request(&rt->requests, owner, request_id);
}

Job *runtime_job_of_process(Runtime *rt, pid_t pid, uid_t owner) {
        _cleanup_free_ char *cgroup = NULL;
        if (cgroup_path_of_pid(pid, &cgroup) < 0)
                return NULL;
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++) {
                Containment *c = runtime_containment(rt, m);
                char id[JOB_ID_MAX];
                if (!c || containment_identify(c, cgroup, id) <= 0)
                        continue;
                Job *j = job_table_get(&rt->jobs, id);
                return j && !job_is_ended(j) && j->owner == owner ? j : NULL;
        }
        return NULL;
}

/* A job counts as running (MaxRunningJobs=, RunningJobs) while it is in
 * the table and job_counts_running() says so: added, removed, and each
 * change of its state (job_set_state()) keep the counts in step. */
void runtime_count_running(Runtime *rt, Job *j, bool on) {
        Owner *o = j->account;
        if (on) {
                rt->n_running++;
                o->running++;
        } else {
                rt->n_running--;
                o->running--;
        }
        queue_count_running(j, on);
        /* Room for its owner's queue, perhaps. */
        if (!on && o->n_queued > 0)
                queue_wake(rt, o);
}

int runtime_add_job(Runtime *rt, Job *j) {
        Owner *o;
        int r = owner_get_or_add(&rt->owners, j->owner, &o);
        if (r >= 0)
                r = job_table_put(&rt->jobs, j);
        if (r < 0)
                return r;
        if (j->request_id) {
                r = job_table_put(&rt->requests, j);
                /* Two records of one RequestId (the store holds only what
                 * Launch made, so never): the later is not found by it. */
                if (r == -EEXIST)
                        free(TAKE_PTR(j->request_id));
                else if (r < 0) {
                        job_table_remove(&rt->jobs, j);
                        return r;
                }
        }
        j->account = o;
        if (!job_is_ended(j)) {
                r = queue_join(rt, j);
                if (r < 0) {
                        j->account = NULL;
                        job_table_remove(&rt->jobs, j);
                        job_table_remove(&rt->requests, j);
                        return r;
                }
        }
        /* A parent is launched before its children, and loaded before them. */
        Job *p = j->parent_id[0] ? job_table_get(&rt->jobs, j->parent_id) : NULL;
        if (p && p->owner == j->owner) {
                j->parent = p;
                LIST_PREPEND_F(sibling, p->children, j);
        }
        QUEUE_APPEND(all, rt->all, j);
        QUEUE_APPEND(owner, o->jobs, j);
        o->records++;
        o->disk_bytes += j->disk_size;
        if (job_counts_running(j))
                runtime_count_running(rt, j, true);
        if (job_is_ended(j))
                QUEUE_APPEND(ended, rt->ended, j);
        return 0;
}

void runtime_remove_job(Runtime *rt, Job *j) {
        Owner *o = j->account;
        assert(o);
        if (rt->notifier && rt->notifier->job_unlisted)
                rt->notifier->job_unlisted(rt->notifier_data, j);
        job_table_remove(&rt->jobs, j);
        job_table_remove(&rt->requests, j);
        if (j->parent)
                LIST_REMOVE_F(sibling, j->parent->children, j);
        for (Job *c = j->children; c; c = c->sibling_next)
                c->parent = NULL;
        j->parent = j->children = NULL;
        QUEUE_REMOVE(all, rt->all, j);
        QUEUE_REMOVE(owner, o->jobs, j);
        o->records--;
        o->disk_bytes -= j->disk_size;
        if (job_counts_running(j))
                runtime_count_running(rt, j, false);
        queue_leave(rt, j);
        if (job_is_ended(j))
                QUEUE_REMOVE(ended, rt->ended, j);
        runtime_cache_drop(rt, j->id);
        j->account = NULL;
}

void runtime_job_ended(Runtime *rt, Job *j) {
        queue_leave(rt, j);
        QUEUE_APPEND(ended, rt->ended, j);
}

Containment *runtime_containment(Runtime *rt, Mechanism m) {
        return (unsigned) m < _MECHANISM_MAX && rt->containments[m].ops ? &rt->containments[m] : NULL;
}

void runtime_cache_read_files(RecordCache *c, int dir_fd) {
        (void) job_store_output_counts(dir_fd, &c->output_bytes, &c->output_dropped_bytes);
        if (c->spec.allowed_domains)
                (void) network_denied_read(dir_fd, &c->network_denied);
}

void runtime_cache_drop(Runtime *rt, const char *id) {
        RecordCache *c = &rt->cache;
        if (id && !streq(c->id, id))
                return;
        job_spec_done(&c->spec);
        job_run_done(&c->run);
        free(c->network_denied);
        char *live = c->live_network_denied;
        *c = (RecordCache) { .live_network_denied = live };
}
