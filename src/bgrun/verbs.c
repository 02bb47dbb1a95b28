/* SPDX-License-Identifier: MIT */
/* What each verb does: run, status, logs, stop, kill, send, list, wait,
 * forget, reap. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach.h"
#include "bgrun/bus-api.h"
#include "bus-json.h"
#include "call.h"
#include "duration.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "output.h"
#include "print.h"
#include "record.h"
#include "run-env.h"
#include "time-util.h"
#include "verbs.h"

/* Jobs per ListJobsPaged call: bgrund's most. */
#define LIST_PAGE_SIZE 1000

/* Kill returns only once the teardown is confirmed; give it time. */
#define KILL_CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)
/* Stop waits the grace first (at most 10 min). */
#define STOP_CALL_TIMEOUT_USEC ((600 + 120) * USEC_PER_SEC)

/* A word the shell reads as itself: no quoting needed. */
static bool word_is_plain(const char *w) {
        if (!*w)
                return false;
        for (const char *p = w; *p; p++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *p))
                        return false;
        return true;
}

/* One word after --: a shell command line, as it is. Several: an argv,
 * each word quoted for /bin/sh (single quotes, ' as '\''), so the job runs
 * exactly those words. */
char *command_from_words(char *const *words) {
        size_t len = 1, n = 0;
        char *s, *p;

        for (char *const *w = words; *w; w++, n++)
                len += 4 * strlen(*w) + 3;
        if (n == 1)
                return strdup(words[0]);

        s = p = malloc(len);
        if (!s)
                return NULL;
        for (char *const *w = words; *w; w++) {
                if (w != words)
                        *p++ = ' ';
                if (word_is_plain(*w)) {
                        p = stpcpy(p, *w);
                        continue;
                }
                *p++ = '\'';
                for (const char *c = *w; *c; c++)
                        if (*c == '\'')
                                p = stpcpy(p, "'\\''");
                        else
                                *p++ = *c;
                *p++ = '\'';
        }
        *p = '\0';
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

/* The Environment run sends, checked against bgrund's limits here, so that
 * the error says what to do. */
static int build_environment(const Args *args, const char ***ret) {
        _cleanup_free_ const char **env = NULL;
        RunEnvOptions o = {
                .clean = args->clean_env,
                .remote = bus_target_is_remote(&args->target),
                .other_user = launch_args_is_set(&args->launch, LAUNCH_OPTION_USER),
                .tty = args->tty,
                .setenv = args->launch.environment,
        };
        size_t n, bytes = 0;
        int r;

        r = run_environment(environ, &o, &env, &n);
        if (r < 0)
                return log_oom();

        for (size_t i = 0; i < n; i++)
                bytes += strlen(env[i]) + 1;
        if (n > LAUNCH_ENVIRONMENT_MAX_ENTRIES || bytes > LAUNCH_ENVIRONMENT_MAX_BYTES) {
                log_error("The environment is too large for bgrund (%zu variables, %zu bytes; it takes at most %d and %d "
                          "bytes): pass less, e.g. --clean-env with -E NAME=VALUE for what the job needs.",
                          n, bytes, LAUNCH_ENVIRONMENT_MAX_ENTRIES, LAUNCH_ENVIRONMENT_MAX_BYTES);
                return -E2BIG;
        }

        *ret = TAKE_PTR(env);
        return 0;
}

int verb_run(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *command = NULL, *directory = NULL;
        _cleanup_free_ const char **env = NULL;
        LaunchArgs launch = args->launch;
        bool attach_output = args->wait && !args->json;
        const char *id, *path;
        int r;

        command = command_from_words(args->words + 1);
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

        r = build_environment(args, &env);
        if (r < 0)
                return r;
        if (env[0])
                launch_args_set(&launch, LAUNCH_OPTION_ENVIRONMENT, (LaunchValue) { .strv = (char *const *) env });
        else
                launch.set &= ~(1U << LAUNCH_OPTION_ENVIRONMENT);

        launch.stdin_pipe = args->stdin_forward;
        launch.tty = args->tty;
        if (args->tty)
                (void) attach_terminal_size(&launch.tty_rows, &launch.tty_columns);

        /* An interrupt from here on stops the job we start. */
        if (args->wait) {
                r = attach_block_signals(args->tty);
                if (r < 0)
                        return r;
        }

        r = manager_new_call(bus, "Launch", &m, "sss", command, args->session ?: "", directory);
        if (r < 0)
                return r;
        r = launch_args_append(&launch, m);
        if (r < 0)
                return log_error_errno(r, "Failed to build Launch call: %m");

        r = manager_call(bus, m, 0, NULL, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return log_parse_error("Launch", r);

        if (args->wait) {
                _cleanup_json_ json_object *rec = NULL;
                AttachOptions o = {
                        .output = attach_output,
                        .input = args->stdin_forward || args->tty,
                        .tty = args->tty,
                        .quiet = args->quiet,
                };
                int status;

                if (!args->quiet) {
                        if (args->tty && isatty(STDIN_FILENO))
                                log_info("Running as job %s. Press ^] three times within 1s to detach.", id);
                        else
                                log_info("Running as job %s.", id);
                }

                status = attach_job(bus, id, &o, &rec);
                if (status < 0 || !rec)
                        return status;
                if (args->json) {
                        r = print_json(rec);
                        if (r < 0)
                                return r;
                } else
                        note_outcome(rec, id);
                return status;
        }

        if (args->json) {
                _cleanup_json_ json_object *rec = NULL;

                r = get_record(bus, id, &rec);
                if (r < 0)
                        return r;
                r = print_json(rec);
        } else if (puts(id) == EOF || fflush(stdout) == EOF)
                r = log_error_errno(errno, "Failed to write job id: %m");
        if (r < 0)
                return r;

        /* run --stdin: our stdin to the job until its end, then EOF. From a
         * terminal, the input stays open for bgrun send instead: typing it
         * here, with no --wait to show what the job makes of it, is not
         * what anyone wants. */
        if (args->stdin_forward && isatty(STDIN_FILENO)) {
                if (!args->quiet)
                        log_info("The input of job %s stays open: bgrun send %s TEXT, bgrun send %s --eof.", id, id, id);
        } else if (args->stdin_forward) {
                r = forward_input(bus, id, STDIN_FILENO);
                if (r < 0)
                        return r;
        }
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
        _cleanup_json_ json_object *first = NULL, *rec = NULL;
        int r;

        r = output_open(bus, args->words[1], 0, &src, args->follow ? &first : NULL);
        if (r < 0)
                return r;

        if (args->options_seen & OPTION_LINES) {
                r = output_seek_tail(bus, &src, args->lines);
                if (r < 0)
                        return r;
        }

        if (args->follow)
                r = output_follow(bus, &src, NULL, TAKE_PTR(first), &rec);
        else
                r = output_pump(bus, &src, 0);
        if (r < 0)
                return r;

        return EXIT_SUCCESS;
}

/* "Job ID killed, nothing of it is left alive (cgroup.kill)." from Kill's
 * or Stop's answer; verb is what a running job had done to it. */
static void print_end_answer(json_object *result, const char *id, const char *verb) {
        json_object *t;
        const char *method;
        bool killed, dead, dead_known;

        t = dict_get(result, &kill_keys[KILL_KEY_TEARDOWN]);
        dead_known = dict_get_bool(t, &teardown_keys[TEARDOWN_KEY_DEAD], &dead);

        if (dict_get_bool(result, &kill_keys[KILL_KEY_KILLED], &killed) && killed)
                printf("Job %s %s", id, verb);
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
}

static int kill_session(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_json_ json_object *result = NULL;
        json_object *v;
        uint64_t killed = 0;
        bool dead = false, dead_known;
        int r;

        r = manager_new_call(bus, "KillSession", &m, "s", args->session);
        if (r < 0)
                return r;
        r = call_dict(bus, m, KILL_CALL_TIMEOUT_USEC, NULL, &result);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(result);

        if ((v = json_object_object_get(result, "killed")) && json_object_is_type(v, json_type_int))
                killed = json_object_get_uint64(v);
        v = json_object_object_get(result, "dead");
        dead_known = v && json_object_is_type(v, json_type_boolean);
        if (dead_known)
                dead = json_object_get_boolean(v);

        printf("Killed %" PRIu64 " job%s of session ", killed, killed == 1 ? "" : "s");
        print_cell(args->session, SIZE_MAX);
        if (killed > 0 && dead)
                printf(", nothing of %s is left alive", killed == 1 ? "it" : "them");
        puts(".");
        if (dead_known && !dead)
                log_error("Warning: the teardown of some jobs of the session is not confirmed; processes of them may "
                          "still be alive.");
        return EXIT_SUCCESS;
}

/* --json of kill or stop: one job's answer as bgrund gave it; of several,
 * one array of them, each with its "id" first. */
typedef struct JsonAnswers {
        size_t n_jobs;
        json_object *array;
} JsonAnswers;

static int json_answer(JsonAnswers *a, const char *id, json_object *answer) {
        _cleanup_json_ json_object *obj = NULL;

        if (a->n_jobs == 1)
                return print_json(answer);

        if (!a->array && !(a->array = json_object_new_array()))
                return log_oom();
        obj = json_object_new_object();
        if (!obj || json_add_str(obj, record_keys[RECORD_KEY_ID].name, id) < 0)
                return log_oom();
        json_object_object_foreach(answer, key, value)
                if (json_object_object_add(obj, key, json_object_get(value)) < 0)
                        return log_oom();
        if (json_object_array_add(a->array, obj) < 0)
                return log_oom();
        TAKE_PTR(obj);
        return 0;
}

static int json_answers_done(JsonAnswers *a) {
        int r = 0;

        if (a->array)
                r = print_json(a->array);
        json_object_put(a->array);
        a->array = NULL;
        return r;
}

int verb_kill(sd_bus *bus, const Args *args) {
        JsonAnswers answers = { .n_jobs = args->n_words - 1 };
        int ret = EXIT_SUCCESS;

        if (args->session)
                return kill_session(bus, args);

        for (size_t i = 1; i < args->n_words; i++) {
                _cleanup_json_ json_object *result = NULL;
                const char *id = args->words[i];
                int r;

                r = call_id_dict(bus, "Kill", id, NULL, KILL_CALL_TIMEOUT_USEC, &result);
                if (r < 0) {
                        ret = r;
                        continue;
                }
                if (args->json)
                        r = json_answer(&answers, id, result);
                else
                        print_end_answer(result, id, "killed");
                if (r < 0)
                        ret = r;
        }
        if (json_answers_done(&answers) < 0)
                ret = -EIO;
        return ret;
}

/* Stop calls in flight at once: each waits its job's grace in bgrund. */
typedef struct StopReply {
        const char *id;
        sd_bus_message *reply;
        bool done;
} StopReply;

static int on_stop_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        StopReply *s = userdata;

        s->reply = sd_bus_message_ref(m);
        s->done = true;
        return 0;
}

int verb_stop(sd_bus *bus, const Args *args) {
        size_t n = args->n_words - 1, pending = n;
        JsonAnswers answers = { .n_jobs = n };
        _cleanup_free_ StopReply *replies = calloc(n, sizeof(StopReply));
        _cleanup_free_ sd_bus_slot **slots = calloc(n, sizeof(sd_bus_slot *));
        int ret = EXIT_SUCCESS, r;

        if (!replies || !slots)
                return log_oom();

        for (size_t i = 0; i < n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

                replies[i].id = args->words[i + 1];
                r = manager_new_call(bus, "Stop", &m, "s", replies[i].id);
                if (r < 0)
                        goto finish;
                r = sd_bus_message_open_container(m, 'a', "{sv}");
                if (r >= 0 && args->signal > 0)
                        r = sd_bus_message_append(m, "{sv}", "Signal", "i", (int32_t) args->signal);
                if (r >= 0 && (args->options_seen & OPTION_GRACE))
                        r = sd_bus_message_append(m, "{sv}", "GraceUSec", "t", args->grace_usec);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r < 0) {
                        r = log_error_errno(r, "Failed to build Stop call: %m");
                        goto finish;
                }
                r = sd_bus_call_async(bus, &slots[i], m, on_stop_reply, &replies[i], STOP_CALL_TIMEOUT_USEC);
                if (r < 0) {
                        r = log_error_errno(r, "Failed to send Stop: %m");
                        goto finish;
                }
        }

        while (pending > 0) {
                r = sd_bus_process(bus, NULL);
                if (r < 0) {
                        r = log_error_errno(r, "Failed to process the bus: %m");
                        goto finish;
                }
                pending = 0;
                for (size_t i = 0; i < n; i++)
                        pending += !replies[i].done;
                if (r == 0 && pending > 0) {
                        r = sd_bus_wait(bus, UINT64_MAX);
                        if (r < 0 && r != -EINTR) {
                                r = log_error_errno(r, "Failed to wait for the bus: %m");
                                goto finish;
                        }
                }
        }

        /* In the order given. */
        for (size_t i = 0; i < n; i++) {
                _cleanup_json_ json_object *result = NULL;
                const sd_bus_error *e = sd_bus_message_get_error(replies[i].reply);

                if (e) {
                        ret = log_call_error("Stop", replies[i].id, e, sd_bus_message_get_errno(replies[i].reply));
                        continue;
                }
                r = bus_json_read(replies[i].reply, &result);
                if (r <= 0 || !json_object_is_type(result, json_type_object)) {
                        ret = log_parse_error("Stop", r < 0 ? r : -EBADMSG);
                        continue;
                }
                if (args->json) {
                        if (json_answer(&answers, replies[i].id, result) < 0)
                                ret = -EIO;
                } else
                        print_end_answer(result, replies[i].id, "stopped");
        }
        if (json_answers_done(&answers) < 0)
                ret = -EIO;
        r = ret;

finish:
        for (size_t i = 0; i < n; i++) {
                sd_bus_slot_unref(slots[i]);
                sd_bus_message_unref(replies[i].reply);
        }
        return r;
}

int verb_send(sd_bus *bus, const Args *args) {
        const char *id = args->words[1];
        int r;

        if (args->n_words > 2) {
                const char *text = args->words[2];
                size_t len = strlen(text);
                _cleanup_free_ char *line = malloc(len + 2);

                if (!line)
                        return log_oom();
                memcpy(line, text, len);
                if (!args->no_newline)
                        line[len++] = '\n';

                r = write_input(bus, id, line, len, args->eof, true);
                return r < 0 ? r : EXIT_SUCCESS;
        }

        r = write_input(bus, id, NULL, 0, true, true);
        return r < 0 ? r : EXIT_SUCCESS;
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
        int r = manager_new_call(bus, "ListJobsPaged", &m, "ssu", session, after, (uint32_t) LIST_PAGE_SIZE);
        if (r < 0)
                return r;
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

static int list_all(sd_bus *bus, const char *session, Pages *pages, JobListEntry **jobs, size_t *n) {
        const char *after = "";

        /* Always in pages: one answer for any number of jobs could pass
         * what the bus carries. */
        do {
                int r = list_page(bus, session, after, pages, jobs, n, &after);
                if (r < 0)
                        return r;
        } while (*after);
        return 0;
}

int verb_list(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0;
        int r;

        r = list_all(bus, args->session ?: "", &pages, &jobs, &n);
        if (r < 0)
                return r;

        if (args->json)
                return print_job_list_json(jobs, n);
        return print_job_list(jobs, n);
}

/* Waits in turns of at most this long per job with --any, so that one
 * job's Wait does not hide another's end. */
#define WAIT_ANY_SLICE_USEC (250 * USEC_PER_MSEC)

int verb_wait(sd_bus *bus, const Args *args) {
        size_t n = args->n_words - 1;
        _cleanup_free_ json_object **recs = calloc(n, sizeof(json_object *));
        uint64_t deadline = USEC_INFINITY;
        int ret = EXIT_SUCCESS, r = 0;
        size_t ended_first = SIZE_MAX;
        char buf[128];

        if (!recs)
                return log_oom();
        if (args->timeout_usec != USEC_INFINITY && args->timeout_usec < USEC_INFINITY - now_monotonic_usec())
                deadline = now_monotonic_usec() + args->timeout_usec;

        if (args->any && n > 1) {
                /* Round robin: a short Wait each until one has ended. */
                for (;;) {
                        uint64_t now = now_monotonic_usec();
                        uint64_t slice = WAIT_ANY_SLICE_USEC;

                        if (deadline != USEC_INFINITY)
                                slice = now >= deadline ? 0 : MIN(slice, deadline - now);
                        for (size_t i = 0; i < n && ended_first == SIZE_MAX; i++) {
                                json_object_put(recs[i]);
                                recs[i] = NULL;
                                r = wait_record(bus, args->words[i + 1], slice / n, &recs[i]);
                                if (r < 0)
                                        goto finish;
                                if (!record_is_running(recs[i]))
                                        ended_first = i;
                        }
                        if (ended_first != SIZE_MAX || (deadline != USEC_INFINITY && now_monotonic_usec() >= deadline))
                                break;
                }
        } else
                for (size_t i = 0; i < n; i++) {
                        uint64_t now = now_monotonic_usec(), left = USEC_INFINITY;

                        if (deadline != USEC_INFINITY)
                                left = now >= deadline ? 0 : deadline - now;
                        r = wait_until_ended(bus, args->words[i + 1], left, &recs[i]);
                        if (r < 0)
                                goto finish;
                        if (args->any && !record_is_running(recs[i]))
                                ended_first = i;
                }

        if (args->json) {
                if (ended_first != SIZE_MAX)
                        r = print_json(recs[ended_first]);
                else if (n == 1)
                        r = print_json(recs[0]);
                else {
                        _cleanup_json_ json_object *array = json_object_new_array();

                        if (!array) {
                                r = log_oom();
                                goto finish;
                        }
                        for (size_t i = 0; i < n; i++)
                                if (json_object_array_add(array, json_object_get(recs[i])) < 0) {
                                        r = log_oom();
                                        goto finish;
                                }
                        r = print_json(array);
                }
                if (r < 0)
                        goto finish;
        }

        if (args->any) {
                if (ended_first == SIZE_MAX) {
                        log_error("No job of %zu ended within %s.", n,
                                  args->timeout_string ?: format_duration(buf, sizeof buf, args->timeout_usec));
                        r = EXIT_FAILURE;
                        goto finish;
                }
                if (!args->json) {
                        format_outcome(recs[ended_first], buf, sizeof buf);
                        printf("Job %s %s.\n", record_id(recs[ended_first], args->words[ended_first + 1]), buf);
                }
                r = record_exit_status(recs[ended_first]);
                goto finish;
        }

        for (size_t i = 0; i < n; i++) {
                const char *id = record_id(recs[i], args->words[i + 1]);

                if (record_is_running(recs[i])) {
                        log_error("Job %s still running after %s.", id,
                                  args->timeout_string ?: format_duration(buf, sizeof buf, args->timeout_usec));
                        if (ret == EXIT_SUCCESS)
                                ret = EXIT_FAILURE;
                        continue;
                }
                if (!args->json) {
                        format_outcome(recs[i], buf, sizeof buf);
                        printf("Job %s %s.\n", id, buf);
                }
                if (ret == EXIT_SUCCESS)
                        ret = record_exit_status(recs[i]);
        }
        r = ret;

finish:
        for (size_t i = 0; i < n; i++)
                json_object_put(recs[i]);
        return r;
}

static int forget_one(sd_bus *bus, const char *id, bool quiet_if_gone) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = manager_new_call(bus, "Forget", &m, "s", id);
        if (r < 0)
                return r;

        r = manager_call_raw(bus, m, 0, &error, NULL);
        if (r >= 0)
                return 1;
        /* Gone meanwhile (retention, another forget): nothing to do. */
        if (quiet_if_gone && sd_bus_error_has_name(&error, BGRUN_ERROR_NO_SUCH_JOB))
                return 0;
        return log_call_error("Forget", id, &error, r);
}

static int forget_ended(sd_bus *bus, const Args *args) {
        _cleanup_(pages_done) Pages pages = {};
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0, forgotten = 0;
        uint64_t now = now_realtime_usec();
        int ret = EXIT_SUCCESS, r;

        uid_t uid;

        r = bus_caller_uid(bus, &uid);
        if (r < 0)
                return r;
        r = list_all(bus, args->session ?: "", &pages, &jobs, &n);
        if (r < 0)
                return r;

        for (size_t i = 0; i < n; i++) {
                _cleanup_json_ json_object *rec = NULL;
                uint64_t owner, finished_at;

                if (streq(jobs[i].status, "running"))
                        continue;

                /* An admin sees every user's jobs; --ended is the caller's
                 * own, as KillSession is. */
                r = get_record(bus, jobs[i].id, &rec);
                if (r < 0) {
                        ret = r;
                        continue;
                }
                if (record_is_running(rec) || !dict_get_uint(rec, &record_keys[RECORD_KEY_OWNER], &owner) ||
                    owner != (uint64_t) uid)
                        continue;

                if ((args->options_seen & OPTION_OLDER_THAN) &&
                    (!dict_get_uint(rec, &record_keys[RECORD_KEY_FINISHED_AT], &finished_at) || finished_at == 0 ||
                     now < finished_at || now - finished_at < args->older_than_usec))
                        continue;

                r = forget_one(bus, jobs[i].id, true);
                if (r < 0) {
                        ret = r;
                        continue;
                }
                forgotten += r;
        }

        printf("Forgot %zu ended job%s.\n", forgotten, forgotten == 1 ? "" : "s");
        return ret;
}

int verb_forget(sd_bus *bus, const Args *args) {
        int ret = EXIT_SUCCESS;

        if (args->ended)
                return forget_ended(bus, args);

        for (size_t i = 1; i < args->n_words; i++) {
                int r = forget_one(bus, args->words[i], false);
                if (r < 0)
                        ret = r;
        }
        return ret;
}

int verb_reap(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_json_ json_object *result = NULL;
        uint64_t kept = 0, released = 0, orphans_killed = 0;
        int r;

        r = manager_new_call(bus, "Reap", &m, NULL);
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
