/* SPDX-License-Identifier: MIT */
/* What each verb does: run, status, logs, kill, list, wait, forget, reap. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "call.h"
#include "duration.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output.h"
#include "print.h"
#include "record.h"
#include "verbs.h"

/* Jobs per ListJobsPaged call: bgrund's most. */
#define LIST_PAGE_SIZE 1000

/* Kill returns only once the teardown is confirmed; give it time. */
#define KILL_CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)

static char *join_words(char *const *words) {
        size_t len = 1;
        char *s, *p;

        for (char *const *w = words; *w; w++)
                len += strlen(*w) + 1;

        s = p = malloc(len);
        if (!s)
                return NULL;
        *p = '\0';
        for (char *const *w = words; *w; w++) {
                if (w != words)
                        *p++ = ' ';
                p = stpcpy(p, *w);
        }
        return s;
}

static int get_directory(const char *directory, char **ret) {
        _cleanup_free_ char *cwd = NULL;

        cwd = getcwd(NULL, 0);
        if (!cwd)
                return log_error_errno(errno, "Failed to get the current directory: %m");

        if (!directory) {
                *ret = TAKE_PTR(cwd);
                return 0;
        }
        if (directory[0] == '/') {
                *ret = strdup(directory);
                return *ret ? 0 : log_oom();
        }
        /* The daemon has its own working directory: send an absolute path. */
        if (asprintf(ret, "%s/%s", streq(cwd, "/") ? "" : cwd, directory) < 0)
                return log_oom();
        return 0;
}

/* Tells on stderr how a job we waited for ended, if not plainly. */
static void note_outcome(json_object *rec, const char *id) {
        char buf[128];

        if (record_timed_out(rec) || record_signal(rec) > 0) {
                format_outcome(rec, buf, sizeof buf);
                log_error("Job %s %s.", record_id(rec, id), buf);
        }
}

static int wait_and_stream(sd_bus *bus, const char *id) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        _cleanup_json_ json_object *rec = NULL;
        int r;

        r = output_open(bus, id, &src);
        if (r < 0)
                return r;

        r = output_follow(bus, &src, &rec);
        if (r < 0)
                return r;

        note_outcome(rec, id);
        return record_exit_status(rec);
}

int verb_run(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *command = NULL, *directory = NULL;
        const char *id, *path;
        int r;

        command = join_words(args->words + 1);
        if (!command)
                return log_oom();

        /* Another host has none of our directories: its "/" unless -C says. */
        if (bus_target_is_remote(&args->target) && !args->directory) {
                directory = strdup("/");
                if (!directory)
                        return log_oom();
        } else {
                r = get_directory(args->directory, &directory);
                if (r < 0)
                        return r;
        }

        r = manager_new_call(bus, "Launch", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "sss", command, args->session ?: "", directory);
        if (r >= 0)
                r = launch_args_append(&args->launch, m);
        if (r < 0)
                return log_error_errno(r, "Failed to build Launch call: %m");

        r = manager_call(bus, m, 0, NULL, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return log_parse_error("Launch", r);

        if (args->wait && !args->json)
                return wait_and_stream(bus, id);

        if (args->json) {
                _cleanup_json_ json_object *rec = NULL;

                /* With --json, --wait prints the final record instead of the
                 * output: mixing both would not be JSON. */
                if (args->wait)
                        r = wait_until_ended(bus, id, USEC_INFINITY, &rec);
                else
                        r = get_record(bus, id, &rec);
                if (r < 0)
                        return r;

                r = print_json(rec);
                if (r < 0)
                        return r;
                return args->wait ? record_exit_status(rec) : EXIT_SUCCESS;
        }

        if (puts(id) == EOF)
                return log_error_errno(errno, "Failed to write job id: %m");
        return EXIT_SUCCESS;
}

int verb_status(sd_bus *bus, const Args *args) {
        _cleanup_json_ json_object *rec = NULL;
        int r;

        r = get_record(bus, args->words[1], &rec);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(rec);

        print_record(rec, args->words[1]);
        return EXIT_SUCCESS;
}

int verb_logs(sd_bus *bus, const Args *args) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        int r;

        r = output_open(bus, args->words[1], &src);
        if (r < 0)
                return r;

        if (args->follow) {
                _cleanup_json_ json_object *rec = NULL;

                r = output_follow(bus, &src, &rec);
        } else
                r = output_pump(bus, &src, 0);
        if (r < 0)
                return r;

        return EXIT_SUCCESS;
}

int verb_kill(sd_bus *bus, const Args *args) {
        _cleanup_json_ json_object *result = NULL;
        const char *id = args->words[1], *method;
        json_object *t;
        bool killed, dead, dead_known;
        int r;

        r = call_id_dict(bus, "Kill", id, NULL, KILL_CALL_TIMEOUT_USEC, &result);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(result);

        t = dict_get(result, &kill_keys[KILL_KEY_TEARDOWN]);
        dead_known = dict_get_bool(t, &teardown_keys[TEARDOWN_KEY_DEAD], &dead);

        if (dict_get_bool(result, &kill_keys[KILL_KEY_KILLED], &killed) && killed)
                printf("Job %s killed", id);
        else
                printf("Job %s was not running", id);
        if (dead_known && dead)
                printf(", nothing of it is left alive");
        method = dict_get_string(t, &teardown_keys[TEARDOWN_KEY_METHOD]);
        if (method && method[0]) {
                fputs(" (", stdout);
                print_cell(method, SIZE_MAX);
                putchar(')');
        }
        puts(".");

        if (dead_known && !dead)
                log_error("Warning: the teardown of job %s is not confirmed; processes of it may still be alive.", id);

        return EXIT_SUCCESS;
}

/* The replies a listing's entries point into, kept until it is printed. */
typedef struct Pages {
        sd_bus_message **replies;
        size_t n;
} Pages;

static void pages_done(Pages *p) {
        for (size_t i = 0; i < p->n; i++)
                sd_bus_message_unref(p->replies[i]);
        free(p->replies);
}

/* One page of ListJobsPaged after `after` onto jobs; its reply into pages.
 * *ret_next is the next page's `after`, "" at the end (pointing into the
 * reply). */
static int list_page(sd_bus *bus, const char *session, const char *after, Pages *pages, JobListEntry **jobs,
                     size_t *n, const char **ret_next) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r = manager_new_call(bus, "ListJobsPaged", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "ssu", session, after, (uint32_t) LIST_PAGE_SIZE);
        if (r < 0)
                return log_error_errno(r, "Failed to build ListJobsPaged call: %m");
        r = manager_call(bus, m, 0, NULL, &reply);
        if (r < 0)
                return r;

        sd_bus_message **p = reallocarray(pages->replies, pages->n + 1, sizeof(sd_bus_message *));
        if (!p)
                return log_oom();
        pages->replies = p;
        pages->replies[pages->n++] = sd_bus_message_ref(reply);

        r = sd_bus_message_enter_container(reply, 'a', "(sssso)");
        if (r < 0)
                return log_parse_error("ListJobsPaged", r);
        for (;;) {
                JobListEntry e;
                r = sd_bus_message_read(reply, "(sssso)", &e.id, &e.session, &e.status, &e.command, &e.path);
                if (r < 0)
                        return log_parse_error("ListJobsPaged", r);
                if (r == 0)
                        break;
                JobListEntry *q = reallocarray(*jobs, *n + 1, sizeof(JobListEntry));
                if (!q)
                        return log_oom();
                *jobs = q;
                (*jobs)[(*n)++] = e;
        }
        r = sd_bus_message_exit_container(reply);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", ret_next);
        if (r < 0)
                return log_parse_error("ListJobsPaged", r);
        return 0;
}

int verb_list(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0;
        const char *after = "";

        /* Always in pages: one answer for any number of jobs could pass
         * what the bus carries. */
        do {
                int r = list_page(bus, args->session ?: "", after, &pages, &jobs, &n, &after);
                if (r < 0)
                        return r;
        } while (*after);

        if (args->json)
                return print_job_list_json(jobs, n);
        return print_job_list(jobs, n);
}

int verb_wait(sd_bus *bus, const Args *args) {
        _cleanup_json_ json_object *rec = NULL;
        const char *id = args->words[1];
        char buf[128];
        int r;

        r = wait_until_ended(bus, id, args->timeout_usec, &rec);
        if (r < 0)
                return r;

        if (args->json) {
                r = print_json(rec);
                if (r < 0)
                        return r;
        }

        if (record_is_running(rec)) {
                log_error("Job %s still running after %s.", record_id(rec, id),
                          args->timeout_string ?: format_duration(buf, sizeof buf, args->timeout_usec));
                return EXIT_FAILURE;
        }

        if (!args->json) {
                format_outcome(rec, buf, sizeof buf);
                printf("Job %s %s.\n", record_id(rec, id), buf);
        }
        return record_exit_status(rec);
}

int verb_forget(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = manager_new_call(bus, "Forget", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', args->words[1]);
        if (r < 0)
                return log_error_errno(r, "Failed to build Forget call: %m");

        r = manager_call(bus, m, 0, args->words[1], NULL);
        if (r < 0)
                return r;
        return EXIT_SUCCESS;
}

int verb_reap(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_json_ json_object *result = NULL;
        uint64_t kept = 0, released = 0, orphans_killed = 0;
        int r;

        r = manager_new_call(bus, "Reap", &m);
        if (r < 0)
                return r;

        r = call_dict(bus, m, KILL_CALL_TIMEOUT_USEC, NULL, &result);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(result);

        /* A count bgrund did not send is 0, as it always was here. */
        (void) dict_get_uint(result, &reap_keys[REAP_KEY_BACKGROUND_KEPT], &kept);
        (void) dict_get_uint(result, &reap_keys[REAP_KEY_RELEASED], &released);
        (void) dict_get_uint(result, &reap_keys[REAP_KEY_ORPHANS_KILLED], &orphans_killed);

        printf("Background jobs kept:    %" PRIu64 "\n"
               "Containments released:   %" PRIu64 "\n"
               "Orphans killed:          %" PRIu64 "\n",
               kept, released, orphans_killed);
        return EXIT_SUCCESS;
}
