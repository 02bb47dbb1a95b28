/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>

#include "caller-binding.h"
#include "job.h"
#include "list.h"
#include "log.h"

int caller_jobs_add(CallerJobs *l, Job *j) {
        if (j->caller_bound)
                return -EALREADY;
        CallerBound *bound = calloc(1, sizeof(CallerBound));
        if (!bound)
                return -ENOMEM;
        *bound = (CallerBound) { .list = l, .job = j };
        LIST_PREPEND(l->head, bound);
        l->n++;
        j->caller_bound = bound;
        return 0;
}

CallerJobs *caller_jobs_remove(Job *j) {
        CallerBound *bound = j->caller_bound;
        if (!bound)
                return NULL;
        CallerJobs *l = bound->list;
        j->caller_bound = NULL;
        LIST_REMOVE(l->head, bound);
        l->n--;
        free(bound);
        return l;
}

unsigned caller_jobs_stop(CallerJobs *l, const char *name) {
        unsigned n = 0;
        for (CallerBound *bound = l->head, *next; bound; bound = next) {
                next = bound->next;
                Job *j = bound->job;
                j->caller_bound = NULL;
                free(bound);
                if (job_is_ended(j) || !j->live)
                        continue;
                log_info("Job %s: the connection that launched it (%s) closed; stopping it", j->id, name);
                job_stop(j, j->live->spec.stop_signal, j->live->spec.stop_grace_usec);
                n++;
        }
        *l = (CallerJobs) {};
        return n;
}

void caller_jobs_clear(CallerJobs *l) {
        for (CallerBound *bound = l->head, *next; bound; bound = next) {
                next = bound->next;
                free(bound);
        }
        *l = (CallerJobs) {};
}
