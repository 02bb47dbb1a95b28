/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "job.h"
#include "log.h"
#include "macro.h"
#include "output-watch.h"
#include "runtime.h"

#define WATCH_BUCKETS 256

/* One watched job: its watch descriptor and how many wait on it. */
typedef struct OutputWatch {
        struct OutputWatch *next; /* in its wd's bucket */
        Job *job;
        int wd;
        unsigned waiters;
} OutputWatch;

typedef struct OutputWatches OutputWatches;
struct OutputWatches {
        int fd;
        sd_event_source *source;
        OutputWatch *buckets[WATCH_BUCKETS]; /* by wd */
};

static OutputWatch **bucket(OutputWatches *w, int wd) {
        return &w->buckets[(unsigned) wd % WATCH_BUCKETS];
}

static OutputWatch *find_wd(OutputWatches *w, int wd) {
        for (OutputWatch *e = *bucket(w, wd); e; e = e->next)
                if (e->wd == wd)
                        return e;
        return NULL;
}

static void unlink_entry(OutputWatches *w, OutputWatch *e) {
        for (OutputWatch **p = bucket(w, e->wd); *p; p = &(*p)->next)
                if (*p == e) {
                        *p = e->next;
                        return;
                }
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Runtime *rt = userdata;
        OutputWatches *w = rt->output_watches;
        /* Aligned as struct inotify_event needs. */
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
                return 0;
        for (char *p = buf; p < buf + n;) {
                const struct inotify_event *ev = (const struct inotify_event *) p;
                p += sizeof *ev + ev->len;
                /* Looked up for each event: an earlier one's waiters may
                 * have been answered and its watch removed since. */
                OutputWatch *e = find_wd(w, ev->wd);
                if (!e)
                        continue;
                if (ev->mask & IN_IGNORED) {
                        /* Its directory is gone: no more events come. */
                        unlink_entry(w, e);
                        e->wd = -1;
                        continue;
                }
                if (rt->notifier && rt->notifier->output_grew)
                        rt->notifier->output_grew(rt->notifier_data, e->job);
        }
        return 0;
}

static int watches_get(Runtime *rt, OutputWatches **ret) {
        if (rt->output_watches) {
                *ret = rt->output_watches;
                return 0;
        }
        OutputWatches *w = calloc(1, sizeof *w);
        if (!w)
                return -ENOMEM;
        w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        int r = w->fd < 0 ? negative_errno() : sd_event_add_io(rt->event, &w->source, w->fd, EPOLLIN, on_events, rt);
        if (r < 0) {
                safe_close(w->fd);
                free(w);
                return r;
        }
        rt->output_watches = *ret = w;
        return 0;
}

int output_watch_add(Runtime *rt, Job *j) {
        if (j->output_watch) {
                j->output_watch->waiters++;
                return 0;
        }
        OutputWatches *w;
        int r = watches_get(rt, &w);
        if (r < 0)
                return r;
        OutputWatch *e = calloc(1, sizeof *e);
        if (!e)
                return -ENOMEM;
        /* The directory: the output's file is written there, and replaced
         * there when it is compacted. */
        char path[64 + JOB_ID_MAX];
        snprintf(path, sizeof path, "/proc/self/fd/%d/%s", rt->jobs_fd, j->id);
        e->wd = inotify_add_watch(w->fd, path, IN_MODIFY | IN_MOVED_TO | IN_ONLYDIR);
        if (e->wd < 0) {
                r = negative_errno();
                free(e);
                return r;
        }
        /* The same directory watched again (never for two jobs) has the
         * same wd: the newer entry wins. */
        OutputWatch *old = find_wd(w, e->wd);
        if (old) {
                unlink_entry(w, old);
                old->wd = -1;
        }
        e->job = j;
        e->waiters = 1;
        e->next = *bucket(w, e->wd);
        *bucket(w, e->wd) = e;
        j->output_watch = e;
        return 0;
}

void output_watch_drop(Runtime *rt, Job *j) {
        OutputWatch *e = TAKE_PTR(j->output_watch);
        if (!e)
                return;
        OutputWatches *w = rt->output_watches;
        if (e->wd >= 0) {
                unlink_entry(w, e);
                (void) inotify_rm_watch(w->fd, e->wd);
        }
        free(e);
}

void output_watch_remove(Runtime *rt, Job *j) {
        if (j->output_watch && --j->output_watch->waiters == 0)
                output_watch_drop(rt, j);
}

void output_watches_free(Runtime *rt) {
        OutputWatches *w = TAKE_PTR(rt->output_watches);
        if (!w)
                return;
        for (size_t b = 0; b < WATCH_BUCKETS; b++)
                for (OutputWatch *e = w->buckets[b], *next; e; e = next) {
                        next = e->next;
                        e->job->output_watch = NULL;
                        free(e);
                }
        sd_event_source_disable_unref(w->source);
        safe_close(w->fd);
        free(w);
}
