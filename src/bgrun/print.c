/* SPDX-License-Identifier: MIT */
/* Printing for people: a job's record as labelled lines, the job list as a
 * table fitted to the terminal (or as JSON). */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "duration.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "launch-options.h"
#include "print.h"
#include "record.h"
#include "time-util.h"

void print_cell(const char *s, size_t max_columns) {
        size_t columns = 0, length = 0;

        for (const char *p = s; *p; p++)
                if (((unsigned char) *p & 0xc0) != 0x80)
                        length++;

        for (const char *p = s; *p; p++) {
                unsigned char c = (unsigned char) *p;

                if ((c & 0xc0) != 0x80) {
                        if (length > max_columns && columns + 3 >= max_columns) {
                                fputs("..." + (max_columns < 3 ? 3 - max_columns : 0), stdout);
                                return;
                        }
                        columns++;
                }
                putchar(c < ' ' || c == 0x7f ? ' ' : c);
        }
}

static size_t utf8_columns(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xc0) != 0x80)
                        n++;
        return n;
}

static void print_cell_padded(const char *s, size_t width) {
        print_cell(s, SIZE_MAX);
        for (size_t n = utf8_columns(s); n < width; n++)
                putchar(' ');
}

static char *format_timestamp(char *buf, size_t len, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, len, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                snprintf(buf, len, "@%" PRIu64, usec / USEC_PER_SEC);
        return buf;
}

static const char *yes_no(bool b) {
        return b ? "yes" : "no";
}

/* ListJobs' object path in list --json: not a key of the record. */
#define LIST_KEY_JOB "job"

#define STATUS_LABEL "%12s: "

static void print_usage(json_object *rec);

static void print_label_string(const char *label, const char *value) {
        printf(STATUS_LABEL, label);
        print_cell(value, SIZE_MAX);
        putchar('\n');
}

void print_record(json_object *rec, const char *id) {
        json_object *c, *t;
        const char *s;
        uint64_t u, started_at, finished_at, confirmed_at;
        int64_t code;
        bool b;
        char buf[128];

        print_label_string("Job", record_id(rec, id));

        if ((s = dict_get_string(rec, &record_keys[RECORD_KEY_STATUS]))) {
                if (dict_get_uint(rec, &record_keys[RECORD_KEY_QUEUE_POSITION], &u) && u > 0)
                        printf(STATUS_LABEL "%s (%" PRIu64 " in its queue)\n", "Status", s, u);
                else
                        print_label_string("Status", s);
        }
        if ((s = dict_get_string(rec, &record_keys[RECORD_KEY_FAILURE])) && s[0])
                print_label_string("Failure", s);
        if ((s = dict_get_string(rec, &record_keys[RECORD_KEY_COMMAND])))
                print_label_string("Command", s);
        if ((s = dict_get_string(rec, &record_keys[RECORD_KEY_CWD])))
                print_label_string("Directory", s);
        if ((s = dict_get_string(rec, &record_keys[RECORD_KEY_SESSION_ID])))
                print_label_string("Session", s[0] ? s : "(none)");
        if (dict_get_uint(rec, &record_keys[RECORD_KEY_OWNER], &u)) {
                struct passwd *pw = getpwuid((uid_t) u);

                printf(STATUS_LABEL "%" PRIu64, "Owner", u);
                if (pw && pw->pw_name) {
                        fputs(" (", stdout);
                        print_cell(pw->pw_name, SIZE_MAX);
                        putchar(')');
                }
                putchar('\n');
        }
        if (dict_get_uint(rec, &record_keys[RECORD_KEY_PID], &u) && u > 0)
                printf(STATUS_LABEL "%" PRIu64 "\n", "PID", u);

        if (!record_is_running(rec)) {
                int sig = record_signal(rec);

                if (sig > 0)
                        printf(STATUS_LABEL "%d (%s)\n", "Signal", sig, strsignal(sig));
                else if (dict_get_int(rec, &record_keys[RECORD_KEY_EXIT_CODE], &code) && code >= 0)
                        printf(STATUS_LABEL "%" PRIi64 "\n", "Exit code", code);
                if (record_timed_out(rec))
                        printf(STATUS_LABEL "yes\n", "Timed out");
        }

        if (dict_get_uint(rec, &record_keys[RECORD_KEY_STARTED_AT], &started_at) && started_at > 0) {
                uint64_t end;

                printf(STATUS_LABEL "%s\n", "Started", format_timestamp(buf, sizeof buf, started_at));

                if (dict_get_uint(rec, &record_keys[RECORD_KEY_FINISHED_AT], &finished_at) && finished_at > 0) {
                        printf(STATUS_LABEL "%s\n", "Finished", format_timestamp(buf, sizeof buf, finished_at));
                        end = finished_at;
                } else
                        end = now_realtime_usec();

                if (end >= started_at)
                        printf(STATUS_LABEL "%s%s\n", "Runtime",
                               format_duration(buf, sizeof buf, end - started_at),
                               record_is_running(rec) ? " (so far)" : "");
        }

        if (dict_get_uint(rec, &record_keys[RECORD_KEY_OUTPUT_BYTES], &u)) {
                uint64_t dropped;

                printf(STATUS_LABEL "%" PRIu64 " bytes", "Output", u);
                /* Offsets and output_bytes count what the job wrote; say when
                 * not all of it is kept. */
                if (dict_get_bool(rec, &record_keys[RECORD_KEY_OUTPUT_TRUNCATED], &b) && b &&
                    dict_get_uint(rec, &record_keys[RECORD_KEY_OUTPUT_DROPPED_BYTES], &dropped))
                        printf(", %" PRIu64 " of them dropped (OutputMaxBytes=, KeepFree=)", dropped);
                putchar('\n');
        }

        if ((c = dict_get(rec, &record_keys[RECORD_KEY_CONTAINMENT]))) {
                s = dict_get_string(c, &containment_keys[CONTAINMENT_KEY_MECHANISM]);
                printf(STATUS_LABEL, "Containment");
                print_cell(s ?: "unknown", SIZE_MAX);
                if (dict_get_bool(c, &containment_keys[CONTAINMENT_KEY_CONTAINED], &b))
                        printf(", contained: %s", yes_no(b));
                if (dict_get_bool(c, &containment_keys[CONTAINMENT_KEY_EXECUTED], &b))
                        printf(", executed: %s", yes_no(b));
                putchar('\n');
                if ((s = dict_get_string(c, &containment_keys[CONTAINMENT_KEY_UNIT])) && s[0])
                        print_label_string("Unit", s);
                if ((s = dict_get_string(c, &containment_keys[CONTAINMENT_KEY_CGROUP])) && s[0])
                        print_label_string("CGroup", s);
        }

        if ((t = dict_get(rec, &record_keys[RECORD_KEY_TEARDOWN]))) {
                printf(STATUS_LABEL, "Teardown");
                printf("dead: %s",
                       dict_get_bool(t, &teardown_keys[TEARDOWN_KEY_DEAD], &b) ? yes_no(b) : "unknown");
                if ((s = dict_get_string(t, &teardown_keys[TEARDOWN_KEY_METHOD])) && s[0]) {
                        fputs(", method: ", stdout);
                        print_cell(s, SIZE_MAX);
                }
                if (dict_get_uint(t, &teardown_keys[TEARDOWN_KEY_CONFIRMED_AT], &confirmed_at) && confirmed_at > 0)
                        printf(", confirmed %s", format_timestamp(buf, sizeof buf, confirmed_at));
                putchar('\n');
        }

        print_usage(rec);
}

static void print_bytes(uint64_t bytes) {
        static const char suffixes[] = "KMGTPE";
        double v = (double) bytes;
        size_t i = 0;

        if (bytes < 1024) {
                printf("%" PRIu64 "B", bytes);
                return;
        }
        while (v >= 1024.0 * 1024.0 && i + 1 < sizeof suffixes - 1) {
                v /= 1024.0;
                i++;
        }
        printf("%.1f%c", v / 1024.0, suffixes[i]);
}

/* One value of the limits dictionary, as -p writes its option (the option
 * table's text); a key this build does not know, as it came. */
static void print_limit(const char *key, json_object *v) {
        char buf[FORMAT_DURATION_MAX];
        const LaunchOptionInfo *o = launch_option_by_name(key);
        LaunchText text = o ? o->text : LAUNCH_TEXT_NONE;

        if (!json_object_is_type(v, json_type_int)) {
                print_cell(json_object_get_string(v) ?: "", SIZE_MAX);
                return;
        }
        if (json_object_get_uint64(v) == UINT64_MAX)
                fputs("infinity", stdout);
        else if (text == LAUNCH_TEXT_DURATION || text == LAUNCH_TEXT_CPU_QUOTA)
                fputs(format_duration(buf, sizeof buf, json_object_get_uint64(v)), stdout);
        else if (text == LAUNCH_TEXT_SIGNAL && sigabbrev_np((int) json_object_get_int64(v)))
                printf("SIG%s", sigabbrev_np((int) json_object_get_int64(v)));
        else if (text == LAUNCH_TEXT_BYTES)
                print_bytes(json_object_get_uint64(v));
        else
                printf("%" PRIu64, json_object_get_uint64(v));
}

/* The keys a newer bgrund adds (what the job ran as and used), printed when
 * they are there, by name: an older bgrund does not send them. */
static void print_usage(json_object *rec) {
        json_object *v;
        char buf[FORMAT_DURATION_MAX];

        if (json_object_object_get_ex(rec, "user", &v) && json_object_is_type(v, json_type_string) &&
            json_object_get_string_len(v) > 0)
                print_label_string("User", json_object_get_string(v));
        if (json_object_object_get_ex(rec, "parent", &v) && json_object_is_type(v, json_type_string) &&
            json_object_get_string_len(v) > 0)
                print_label_string("Parent", json_object_get_string(v));
        if (json_object_object_get_ex(rec, "stdin", &v) && json_object_is_type(v, json_type_string) &&
            !streq(json_object_get_string(v), "null"))
                print_label_string("Input", json_object_get_string(v));
        if (json_object_object_get_ex(rec, "request_id", &v) && json_object_is_type(v, json_type_string) &&
            json_object_get_string_len(v) > 0)
                print_label_string("Request ID", json_object_get_string(v));
        if (json_object_object_get_ex(rec, "bind_to_caller", &v) && json_object_is_type(v, json_type_boolean) &&
            json_object_get_boolean(v))
                print_label_string("Bound", "to the connection that launched it (stopped when it closes)");
        if (json_object_object_get_ex(rec, "limits", &v) && json_object_is_type(v, json_type_object) &&
            json_object_object_length(v) > 0) {
                bool first = true;

                printf(STATUS_LABEL, "Limits");
                json_object_object_foreach(v, key, value) {
                        printf("%s%s=", first ? "" : ", ", key);
                        print_limit(key, value);
                        first = false;
                }
                putchar('\n');
        }
        if (json_object_object_get_ex(rec, "sandbox", &v) && json_object_is_type(v, json_type_object) &&
            json_object_object_length(v) > 0) {
                bool first = true;
                json_object *mechanisms = NULL;

                printf(STATUS_LABEL, "Sandbox");
                json_object_object_foreach(v, key, value) {
                        if (streq(key, "mechanisms")) {
                                mechanisms = value;
                                continue;
                        }
                        printf("%s%s=", first ? "" : ", ", key);
                        /* As -p writes them: yes/no, a word, paths by spaces. */
                        if (json_object_is_type(value, json_type_boolean))
                                fputs(json_object_get_boolean(value) ? "yes" : "no", stdout);
                        else if (json_object_is_type(value, json_type_string))
                                print_cell(json_object_get_string(value), SIZE_MAX);
                        else if (json_object_is_type(value, json_type_array))
                                for (size_t k = 0; k < json_object_array_length(value); k++) {
                                        if (k > 0)
                                                putchar(' ');
                                        print_cell(json_object_get_string(json_object_array_get_idx(value, k)) ?: "",
                                                   SIZE_MAX);
                                }
                        else
                                print_cell(json_object_to_json_string(value), SIZE_MAX);
                        first = false;
                }
                for (size_t i = 0; mechanisms && json_object_is_type(mechanisms, json_type_array) &&
                                   i < json_object_array_length(mechanisms); i++)
                        printf("%s%s", i == 0 ? " (" : ", ",
                               json_object_get_string(json_object_array_get_idx(mechanisms, i)) ?: "");
                puts(mechanisms && json_object_array_length(mechanisms) > 0 ? ")" : "");
        }
        /* What the job's proxy refused: so its user can allow it, or not. */
        if (json_object_object_get_ex(rec, "network_denied", &v) && json_object_is_type(v, json_type_object) &&
            json_object_object_length(v) > 0) {
                bool first = true;

                printf(STATUS_LABEL, "Refused");
                json_object_object_foreach(v, host, count) {
                        printf("%s", first ? "" : ", ");
                        print_cell(host, SIZE_MAX);
                        printf(" (%" PRIu64 "×)", json_object_get_uint64(count));
                        first = false;
                }
                puts(" (not in --allow-domain)");
        }
        if (json_object_object_get_ex(rec, "limits_unenforced", &v) && json_object_is_type(v, json_type_array) &&
            json_object_array_length(v) > 0) {
                printf(STATUS_LABEL, "Unenforced");
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        if (i > 0)
                                fputs(", ", stdout);
                        print_cell(json_object_get_string(json_object_array_get_idx(v, i)) ?: "", SIZE_MAX);
                }
                puts(" (no such controller in the job's cgroup)");
        }
        if (json_object_object_get_ex(rec, "cpu_usage_usec", &v) && json_object_is_type(v, json_type_int))
                printf(STATUS_LABEL "%s\n", "CPU time", format_duration(buf, sizeof buf, json_object_get_uint64(v)));
        if (json_object_object_get_ex(rec, "memory_peak", &v) && json_object_is_type(v, json_type_int)) {
                printf(STATUS_LABEL, "Memory peak");
                print_bytes(json_object_get_uint64(v));
                putchar('\n');
        }
}

static size_t terminal_columns(void) {
        struct winsize ws = {};
        const char *e;

        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) >= 0 && ws.ws_col > 0)
                return ws.ws_col;

        e = getenv("COLUMNS");
        if (e) {
                uint64_t v;

                if (parse_uint64_strict(e, &v, NULL) >= 0 && v > 0 && v < 10000)
                        return (size_t) v;
        }
        return 80;
}
/* A row's outcome, from the listing (ListJobsPagedEx) or its record. */
static bool row_outcome(const JobListEntry *j, int64_t *code, int64_t *sig, uint64_t *started, uint64_t *finished) {
        if (j->outcome) {
                *code = j->exit_code, *sig = j->signal, *started = j->started_at, *finished = j->finished_at;
                return true;
        }
        if (!j->record)
                return false;
        *code = -1, *sig = 0, *started = *finished = 0;
        (void) dict_get_int(j->record, &record_keys[RECORD_KEY_EXIT_CODE], code);
        (void) dict_get_int(j->record, &record_keys[RECORD_KEY_SIGNAL], sig);
        (void) dict_get_uint(j->record, &record_keys[RECORD_KEY_STARTED_AT], started);
        (void) dict_get_uint(j->record, &record_keys[RECORD_KEY_FINISHED_AT], finished);
        return true;
}

/* A list row's EXIT: the exit code, the name of the signal that ended it,
 * or "-" (running, queued, never ran). */
static void exit_cell(const char *status, int64_t code, int64_t sig, char *buf, size_t len) {
        bool ran = status && !streq(status, "running") && !streq(status, "queued") && !streq(status, "failed");
        if (ran && sig > 0 && sigabbrev_np((int) sig))
                snprintf(buf, len, "SIG%s", sigabbrev_np((int) sig));
        else if (ran && code >= 0)
                snprintf(buf, len, "%" PRId64, code);
        else
                snprintf(buf, len, "-");
}

/* A list row's RUNTIME: from its start to its end, or to now while it
 * runs; "-" before it started. */
static void runtime_cell(uint64_t started, uint64_t finished, char *buf, size_t len) {
        uint64_t end = finished > 0 ? finished : now_realtime_usec();
        if (started == 0 || end < started) {
                snprintf(buf, len, "-");
                return;
        }
        uint64_t usec = end - started, s = usec / USEC_PER_SEC;
        if (s < 60)
                snprintf(buf, len, "%.1fs", (double) usec / USEC_PER_SEC);
        else if (s < 3600)
                snprintf(buf, len, "%" PRIu64 "min %" PRIu64 "s", s / 60, s % 60);
        else
                snprintf(buf, len, "%" PRIu64 "h %" PRIu64 "min", s / 3600, s / 60 % 60);
}

#define CELL_MAX 32

int print_job_list(const JobListEntry *jobs, size_t n) {
        size_t w_id = strlen("ID"), w_session = strlen("SESSION"), w_status = strlen("STATUS"), w_exit = strlen("EXIT"),
               w_runtime = strlen("RUNTIME");
        size_t command_columns = SIZE_MAX;

        if (n == 0) {
                if (isatty(STDOUT_FILENO))
                        puts("No jobs.");
                return EXIT_SUCCESS;
        }

        /* Each row's cells first: their widths make the columns. */
        _cleanup_free_ char *cells = calloc(n, 3 * CELL_MAX);
        if (!cells)
                return log_oom();
        for (size_t i = 0; i < n; i++) {
                char *status = cells + 3 * CELL_MAX * i, *exit = status + CELL_MAX, *runtime = exit + CELL_MAX;
                uint64_t place = 0;
                if (jobs[i].record && dict_get_uint(jobs[i].record, &record_keys[RECORD_KEY_QUEUE_POSITION], &place) &&
                    place > 0)
                        snprintf(status, CELL_MAX, "queued (%" PRIu64 ")", place);
                else
                        snprintf(status, CELL_MAX, "%s", jobs[i].status);
                int64_t code, sig;
                uint64_t started, finished;
                if (row_outcome(&jobs[i], &code, &sig, &started, &finished)) {
                        exit_cell(jobs[i].status, code, sig, exit, CELL_MAX);
                        runtime_cell(started, finished, runtime, CELL_MAX);
                } else
                        strcpy(exit, "-"), strcpy(runtime, "-");
                size_t w;
                if ((w = utf8_columns(jobs[i].id)) > w_id)
                        w_id = w;
                if ((w = utf8_columns(jobs[i].session[0] ? jobs[i].session : "-")) > w_session)
                        w_session = w;
                w_status = MAX(w_status, utf8_columns(status));
                w_exit = MAX(w_exit, strlen(exit));
                w_runtime = MAX(w_runtime, strlen(runtime));
        }

        if (isatty(STDOUT_FILENO)) {
                size_t used = w_id + w_session + w_status + w_exit + w_runtime + 10, columns = terminal_columns();

                /* Keep a command readable even on a narrow terminal. */
                command_columns = columns > used + 20 ? columns - used : 20;
        }

        printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", (int) w_id, "ID", (int) w_session, "SESSION", (int) w_status,
               "STATUS", (int) w_exit, "EXIT", (int) w_runtime, "RUNTIME", "COMMAND");
        for (size_t i = 0; i < n; i++) {
                const char *status = cells + 3 * CELL_MAX * i;
                print_cell_padded(jobs[i].id, w_id);
                fputs("  ", stdout);
                print_cell_padded(jobs[i].session[0] ? jobs[i].session : "-", w_session);
                fputs("  ", stdout);
                print_cell_padded(status, w_status);
                printf("  %-*s  %-*s  ", (int) w_exit, status + CELL_MAX, (int) w_runtime, status + 2 * CELL_MAX);
                print_cell(jobs[i].command, command_columns);
                putchar('\n');
        }

        return EXIT_SUCCESS;
}

int print_json(json_object *obj) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE;
        const char *s;

        /* Pretty for people, one line per document for pipes. */
        flags |= isatty(STDOUT_FILENO) ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN;

        s = json_object_to_json_string_ext(obj, flags);
        if (!s)
                return log_oom();
        if (puts(s) == EOF || fflush(stdout) == EOF)
                return log_error_errno(errno ? errno : EIO, "Failed to write JSON: %m");
        return 0;
}

static const RecordKey list_record_keys[] = { RECORD_KEY_EXIT_CODE, RECORD_KEY_STARTED_AT, RECORD_KEY_FINISHED_AT,
                                              RECORD_KEY_QUEUE_POSITION };

int print_job_list_json(const JobListEntry *jobs, size_t n) {
        _cleanup_(json_object_putp) json_object *array = NULL;

        array = json_object_new_array();
        if (!array)
                return log_oom();

        for (size_t i = 0; i < n; i++) {
                _cleanup_(json_object_putp) json_object *obj = json_object_new_object();

                if (!obj ||
                    json_add_str(obj, record_keys[RECORD_KEY_ID].name, jobs[i].id) < 0 ||
                    json_add_str(obj, record_keys[RECORD_KEY_SESSION_ID].name, jobs[i].session) < 0 ||
                    json_add_str(obj, record_keys[RECORD_KEY_STATUS].name, jobs[i].status) < 0 ||
                    json_add_str(obj, record_keys[RECORD_KEY_COMMAND].name, jobs[i].command) < 0 ||
                    json_add_str(obj, LIST_KEY_JOB, jobs[i].path) < 0)
                        return log_oom();
                /* From the record, where bgrun read it: as status --json has them. */
                for (size_t k = 0; jobs[i].record && k < ELEMENTSOF(list_record_keys); k++) {
                        json_object *v = dict_get(jobs[i].record, &record_keys[list_record_keys[k]]);
                        if (v && json_object_object_add(obj, record_keys[list_record_keys[k]].name,
                                                        json_object_get(v)) < 0)
                                return log_oom();
                }
                if (json_object_array_add(array, obj) < 0)
                        return log_oom();
                TAKE_PTR(obj);
        }

        return print_json(array);
}
