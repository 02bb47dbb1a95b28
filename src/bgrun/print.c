/* SPDX-License-Identifier: MIT */
/* Printing for people: a job's record as labelled lines, the job list as a
 * table fitted to the terminal (or as JSON). */

#include <inttypes.h>
#include <json-c/json.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "dict.h"
#include "duration.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "print.h"
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

static const char *yes_no(int b) {
        return b ? "yes" : "no";
}

#define STATUS_LABEL "%12s: "

static void print_label_string(const char *label, const char *value) {
        printf(STATUS_LABEL, label);
        print_cell(value, SIZE_MAX);
        putchar('\n');
}

void print_record(const JobRecord *rec, const char *id) {
        char buf[128];

        print_label_string("Job", record_id(rec, id));

        if (RECORD_HAS(rec, RECORD_STATUS))
                print_label_string("Status", rec->status);
        if (RECORD_HAS(rec, RECORD_COMMAND))
                print_label_string("Command", rec->command);
        if (RECORD_HAS(rec, RECORD_CWD))
                print_label_string("Directory", rec->cwd);
        if (RECORD_HAS(rec, RECORD_SESSION_ID))
                print_label_string("Session", rec->session_id[0] ? rec->session_id : "(none)");
        if (RECORD_HAS(rec, RECORD_OWNER)) {
                struct passwd *pw = getpwuid(rec->owner);

                printf(STATUS_LABEL "%" PRIu32, "Owner", rec->owner);
                if (pw && pw->pw_name) {
                        fputs(" (", stdout);
                        print_cell(pw->pw_name, SIZE_MAX);
                        putchar(')');
                }
                putchar('\n');
        }
        if (RECORD_HAS(rec, RECORD_PID) && rec->pid > 0)
                printf(STATUS_LABEL "%" PRIu32 "\n", "PID", rec->pid);

        if (!record_is_running(rec)) {
                int sig = record_signal(rec);

                if (sig > 0)
                        printf(STATUS_LABEL "%d (%s)\n", "Signal", sig, strsignal(sig));
                else if (RECORD_HAS(rec, RECORD_EXIT_CODE) && rec->exit_code >= 0)
                        printf(STATUS_LABEL "%" PRIi32 "\n", "Exit code", rec->exit_code);
                if (record_timed_out(rec))
                        printf(STATUS_LABEL "yes\n", "Timed out");
        }

        if (RECORD_HAS(rec, RECORD_STARTED_AT) && rec->started_at > 0) {
                uint64_t end;

                printf(STATUS_LABEL "%s\n", "Started", format_timestamp(buf, sizeof buf, rec->started_at));

                if (RECORD_HAS(rec, RECORD_FINISHED_AT) && rec->finished_at > 0) {
                        printf(STATUS_LABEL "%s\n", "Finished", format_timestamp(buf, sizeof buf, rec->finished_at));
                        end = rec->finished_at;
                } else
                        end = now_realtime_usec();

                if (end >= rec->started_at)
                        printf(STATUS_LABEL "%s%s\n", "Runtime",
                               format_duration(buf, sizeof buf, end - rec->started_at),
                               record_is_running(rec) ? " (so far)" : "");
        }

        if (RECORD_HAS(rec, RECORD_OUTPUT_BYTES))
                printf(STATUS_LABEL "%" PRIu64 " bytes\n", "Output", rec->output_bytes);

        if (RECORD_HAS(rec, RECORD_CONTAINMENT)) {
                const Containment *c = &rec->containment;

                printf(STATUS_LABEL, "Containment");
                print_cell(SUB_HAS(c, CONTAINMENT_MECHANISM) ? c->mechanism : "unknown", SIZE_MAX);
                if (SUB_HAS(c, CONTAINMENT_CONTAINED))
                        printf(", contained: %s", yes_no(c->contained));
                if (SUB_HAS(c, CONTAINMENT_EXECUTED))
                        printf(", executed: %s", yes_no(c->executed));
                putchar('\n');
                if (SUB_HAS(c, CONTAINMENT_UNIT) && c->unit[0])
                        print_label_string("Unit", c->unit);
                if (SUB_HAS(c, CONTAINMENT_CGROUP) && c->cgroup[0])
                        print_label_string("CGroup", c->cgroup);
        }

        if (RECORD_HAS(rec, RECORD_TEARDOWN)) {
                const Teardown *t = &rec->teardown;

                printf(STATUS_LABEL, "Teardown");
                printf("dead: %s", SUB_HAS(t, TEARDOWN_DEAD) ? yes_no(t->dead) : "unknown");
                if (SUB_HAS(t, TEARDOWN_METHOD) && t->method[0]) {
                        fputs(", method: ", stdout);
                        print_cell(t->method, SIZE_MAX);
                }
                if (SUB_HAS(t, TEARDOWN_CONFIRMED_AT) && t->confirmed_at > 0)
                        printf(", confirmed %s", format_timestamp(buf, sizeof buf, t->confirmed_at));
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
int print_job_list(const JobListEntry *jobs, size_t n) {
        size_t w_id = strlen("ID"), w_session = strlen("SESSION"), w_status = strlen("STATUS");
        size_t command_columns = SIZE_MAX;

        if (n == 0) {
                if (isatty(STDOUT_FILENO))
                        puts("No jobs.");
                return EXIT_SUCCESS;
        }

        for (size_t i = 0; i < n; i++) {
                size_t w;

                if ((w = utf8_columns(jobs[i].id)) > w_id)
                        w_id = w;
                if ((w = utf8_columns(jobs[i].session[0] ? jobs[i].session : "-")) > w_session)
                        w_session = w;
                if ((w = utf8_columns(jobs[i].status)) > w_status)
                        w_status = w;
        }

        if (isatty(STDOUT_FILENO)) {
                size_t used = w_id + w_session + w_status + 6, columns = terminal_columns();

                /* Keep a command readable even on a narrow terminal. */
                command_columns = columns > used + 20 ? columns - used : 20;
        }

        printf("%-*s  %-*s  %-*s  %s\n", (int) w_id, "ID", (int) w_session, "SESSION", (int) w_status, "STATUS",
               "COMMAND");
        for (size_t i = 0; i < n; i++) {
                print_cell_padded(jobs[i].id, w_id);
                fputs("  ", stdout);
                print_cell_padded(jobs[i].session[0] ? jobs[i].session : "-", w_session);
                fputs("  ", stdout);
                print_cell_padded(jobs[i].status, w_status);
                fputs("  ", stdout);
                print_cell(jobs[i].command, command_columns);
                putchar('\n');
        }

        return EXIT_SUCCESS;
}

int print_job_list_json(const JobListEntry *jobs, size_t n) {
        _cleanup_(json_object_putp) json_object *array = NULL;

        array = json_object_new_array();
        if (!array)
                return log_oom();

        for (size_t i = 0; i < n; i++) {
                _cleanup_(json_object_putp) json_object *obj = json_object_new_object();

                if (!obj ||
                    json_object_object_add(obj, "id", json_object_new_string(jobs[i].id)) < 0 ||
                    json_object_object_add(obj, "session_id", json_object_new_string(jobs[i].session)) < 0 ||
                    json_object_object_add(obj, "status", json_object_new_string(jobs[i].status)) < 0 ||
                    json_object_object_add(obj, "command", json_object_new_string(jobs[i].command)) < 0 ||
                    json_object_object_add(obj, "job", json_object_new_string(jobs[i].path)) < 0 ||
                    json_object_array_add(array, obj) < 0)
                        return log_oom();
                TAKE_PTR(obj);
        }

        return print_json(array);
}
