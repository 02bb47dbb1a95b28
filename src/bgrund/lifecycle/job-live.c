/* SPDX-License-Identifier: MIT */
/* A live job's parts and their release: each part let go in one place,
 * whoever ends it (job-live.h). */
#include <assert.h>
#include <stdlib.h>

#include "job-live.h"
#include "macro.h"

int job_make_live(Job *j) {
        assert(!j->live);
        j->live = calloc(1, sizeof(JobLive));
        if (!j->live)
                return -ENOMEM;
        *j->live = (JobLive) {
                .dir_fd = -EBADF,
                .supervisor = PIDREF_NULL,
                .teardown_handle = -EBADF,
                .kill_lock_fd = -EBADF,
                .kill_cgroup_fd = -EBADF,
                .start = { .spawned_pidfd = -EBADF, .go_fd = -EBADF },
                .control_fd = -EBADF,
                .input_fd = -EBADF,
        };
        return 0;
}

void job_start_release(JobStart *s) {
        s->ready_source = sd_event_source_disable_unref(s->ready_source);
        s->start_timer = sd_event_source_disable_unref(s->start_timer);
        s->go_fd = safe_close(s->go_fd);
        s->spawned_pidfd = safe_close(s->spawned_pidfd);
}

void job_input_disconnect(JobLive *l) {
        l->held_source = sd_event_source_disable_unref(l->held_source);
        free(l->held);
        l->held = NULL;
        l->control_source = sd_event_source_disable_unref(l->control_source);
        l->control_fd = safe_close(l->control_fd);
        l->control_greeted = false;
        l->input_fd = safe_close(l->input_fd);
}

void job_kill_direct_done(JobLive *l) {
        l->kill_source = sd_event_source_disable_unref(l->kill_source);
        l->kill_poll = sd_event_source_disable_unref(l->kill_poll);
        l->kill_cgroup_fd = safe_close(l->kill_cgroup_fd);
        /* The lock goes last: the supervisor waiting for it reads the slot. */
        l->kill_lock_fd = safe_close(l->kill_lock_fd);
}

void job_release_live_state(Job *j) {
        JobLive *l = TAKE_PTR(j->live);
        if (!l)
                return;
        sd_event_source_disable_unref(l->supervisor_source);
        job_start_release(&l->start);
        sd_event_source_disable_unref(l->teardown_source);
        sd_event_source_disable_unref(l->teardown_timer);
        sd_event_source_disable_unref(l->kill_watchdog);
        job_kill_direct_done(l);
        safe_close(l->teardown_handle);
        job_input_disconnect(l);
        safe_close(l->dir_fd);
        pidref_done(&l->supervisor);
        job_spec_done(&l->spec);
        if (l->run)
                job_run_done(l->run);
        free(l->run);
        free(l);
}
