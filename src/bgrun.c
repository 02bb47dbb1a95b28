/* SPDX-License-Identifier: MIT */
/* bgrun: the command-line front end of bgrund. It talks to the daemon over
 * D-Bus only (org.bgrun.Runtime1 on the system bus, or $BGRUN_BUS_ADDRESS). */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "build-config.h"
#include "bus-errors.h"
#include "duration.h"
#include "macro.h"

/* What dbus-daemon answers when activating a service took too long. */
#define DBUS_ERROR_TIMED_OUT "org.freedesktop.DBus.Error.TimedOut"

#define EXIT_USAGE 2
#define EXIT_TIMEOUT 124 /* as timeout(1) */

#define USEC_INFINITY UINT64_MAX
/* How long one Wait call blocks while we follow output: the latency of the
 * streamed output, and the rate of our calls to the daemon. */
#define FOLLOW_POLL_USEC (200 * USEC_PER_MSEC)
/* Margin on top of a server-side wait, so the reply has time to arrive. */
#define CALL_MARGIN_USEC (25 * USEC_PER_SEC)
/* Kill returns only once the teardown is confirmed; give it time. */
#define KILL_CALL_TIMEOUT_USEC (120 * USEC_PER_SEC)
#define READ_OUTPUT_CHUNK (64U * 1024U)

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* Which options were given; each verb says which it accepts. */
typedef enum OptionFlag {
        OPTION_SESSION = 1 << 0,
        OPTION_DIRECTORY = 1 << 1,
        OPTION_TIMEOUT = 1 << 2,
        OPTION_SETENV = 1 << 3,
        OPTION_PROPERTY = 1 << 4,
        OPTION_WAIT = 1 << 5,
        OPTION_JSON = 1 << 6,
        OPTION_FOLLOW = 1 << 7,
} OptionFlag;

static const char *arg_session = NULL;
static const char *arg_directory = NULL;
static const char *arg_timeout_string = NULL;
static uint64_t arg_timeout_usec = USEC_INFINITY;
static char **arg_environment = NULL; /* pointers into argv, NULL-terminated */
static size_t arg_n_environment = 0;
static bool arg_wait = false;
static bool arg_json = false;
static bool arg_follow = false;
static bool arg_memory_max_set = false;
static uint64_t arg_memory_max = 0;
static bool arg_tasks_max_set = false;
static uint64_t arg_tasks_max = 0;
static bool arg_cpu_quota_set = false;
static uint64_t arg_cpu_quota_per_sec_usec = 0;
static bool arg_max_runtime_set = false;
static uint64_t arg_max_runtime_usec = 0;
static const char *arg_user = NULL;
static unsigned arg_options_seen = 0;

/* ------------------------------------------------------------------------ */
/* Messages: always exactly one line on stderr, prefixed "bgrun: ". */

static void log_vline(const char *format, va_list ap) {
        _cleanup_free_ char *line = NULL;

        if (vasprintf(&line, format, ap) < 0) {
                fputs("bgrun: Out of memory.\n", stderr);
                return;
        }

        /* The daemon's messages are passed on; keep them to one line. */
        for (char *p = line; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f)
                        *p = ' ';

        fprintf(stderr, "bgrun: %s\n", line);
}

_printf_(1, 2) static void log_error(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        log_vline(format, ap);
        va_end(ap);
}

/* Logs with errno set from error, so that %m works; returns -|error|. */
_printf_(2, 3) static int log_error_errno(int error, const char *format, ...) {
        va_list ap;

        error = error < 0 ? -error : error;
        errno = error;
        va_start(ap, format);
        log_vline(format, ap);
        va_end(ap);
        return -error;
}

_printf_(1, 2) static int log_usage_error(const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        log_vline(format, ap);
        va_end(ap);
        return -EINVAL;
}

static int log_oom(void) {
        return log_error_errno(ENOMEM, "Out of memory.");
}

static void log_daemon_missing(void) {
        log_error("bgrund is not running (start it with: systemctl start bgrund.service)");
}

/* ------------------------------------------------------------------------ */
/* Parsing of option values. */

static int parse_uint64_strict(const char *s, uint64_t *ret, const char **ret_end) {
        char *end = NULL;
        unsigned long long v;

        /* strtoull() accepts leading blanks and a sign; we do not. */
        if (!s || *s < '0' || *s > '9')
                return -EINVAL;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno != 0 || end == s)
                return -EINVAL;
        if (!ret_end && *end != '\0')
                return -EINVAL;

        *ret = (uint64_t) v;
        if (ret_end)
                *ret_end = end;
        return 0;
}

/* "1024", "512K", "1G" (base 1024), or "infinity". */
static int parse_size_bytes(const char *s, uint64_t *ret) {
        static const struct {
                char suffix;
                unsigned shift;
        } suffixes[] = {
                { 'K', 10 },
                { 'M', 20 },
                { 'G', 30 },
                { 'T', 40 },
        };
        const char *end;
        uint64_t v;
        int r;

        if (streq(s, "infinity")) {
                *ret = UINT64_MAX;
                return 0;
        }

        r = parse_uint64_strict(s, &v, &end);
        if (r < 0)
                return r;
        if (*end == '\0') {
                *ret = v;
                return 0;
        }
        if (end[1] != '\0')
                return -EINVAL;

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (*end == suffixes[i].suffix) {
                        if (v > (UINT64_MAX >> suffixes[i].shift))
                                return -ERANGE;
                        *ret = v << suffixes[i].shift;
                        return 0;
                }

        return -EINVAL;
}

/* "50%" is half a CPU: 500000 µs per second. Up to four decimals ("12.5%")
 * are exact, since 1% is 10000 µs. */
static int parse_cpu_percent(const char *s, uint64_t *ret) {
        const char *end;
        uint64_t whole, fraction = 0, scale = 10000;
        int r;

        r = parse_uint64_strict(s, &whole, &end);
        if (r < 0)
                return r;
        if (*end == '.') {
                end++;
                if (*end < '0' || *end > '9')
                        return -EINVAL;
                for (; *end >= '0' && *end <= '9'; end++) {
                        if (scale == 1)
                                return -EINVAL; /* finer than 1 µs */
                        scale /= 10;
                        fraction += (uint64_t) (*end - '0') * scale;
                }
        }
        if (!streq(end, "%"))
                return -EINVAL;
        if (whole > (UINT64_MAX - fraction) / 10000)
                return -ERANGE;

        *ret = whole * 10000 + fraction;
        return 0;
}

static int parse_duration_arg(const char *value, const char *what, uint64_t *ret) {
        int r;

        r = parse_duration_usec(value, ret);
        if (r == -ERANGE)
                return log_usage_error("Duration '%s' for %s is out of range.", value, what);
        if (r < 0)
                return log_usage_error("Invalid duration '%s' for %s (try e.g. 90, 90s, 5min, 1h30min).",
                                       value, what);
        return 0;
}

static int parse_property(const char *assignment) {
        _cleanup_free_ char *name = NULL;
        const char *eq, *value;
        int r;

        eq = strchr(assignment, '=');
        if (!eq || eq == assignment)
                return log_usage_error("Invalid property assignment '%s', expected PROP=VALUE.", assignment);

        name = strndup(assignment, (size_t) (eq - assignment));
        if (!name)
                return log_oom();
        value = eq + 1;

        if (streq(name, "MemoryMax")) {
                r = parse_size_bytes(value, &arg_memory_max);
                if (r < 0)
                        return log_usage_error("Invalid MemoryMax '%s' (bytes, with optional K, M, G, T suffix, or 'infinity').",
                                               value);
                arg_memory_max_set = true;

        } else if (streq(name, "TasksMax")) {
                if (streq(value, "infinity"))
                        arg_tasks_max = UINT64_MAX;
                else if (parse_uint64_strict(value, &arg_tasks_max, NULL) < 0)
                        return log_usage_error("Invalid TasksMax '%s' (a number or 'infinity').", value);
                arg_tasks_max_set = true;

        } else if (streq(name, "CPUQuotaPerSecUSec")) {
                if (strchr(value, '%')) {
                        if (parse_cpu_percent(value, &arg_cpu_quota_per_sec_usec) < 0)
                                return log_usage_error("Invalid CPUQuotaPerSecUSec '%s' (e.g. 50%% or 500ms).", value);
                } else if (parse_duration_usec(value, &arg_cpu_quota_per_sec_usec) < 0)
                        return log_usage_error("Invalid CPUQuotaPerSecUSec '%s' (e.g. 50%% or 500ms).", value);
                arg_cpu_quota_set = true;

        } else if (streq(name, "MaxRuntimeUSec")) {
                r = parse_duration_arg(value, "MaxRuntimeUSec", &arg_max_runtime_usec);
                if (r < 0)
                        return r;
                arg_max_runtime_set = true;

        } else if (streq(name, "User")) {
                if (*value == '\0')
                        return log_usage_error("User= needs a user name.");
                arg_user = value;

        } else
                return log_usage_error("Unknown property '%s' (known: MemoryMax, TasksMax, CPUQuotaPerSecUSec, MaxRuntimeUSec, User).",
                                       name);

        return 0;
}

/* ------------------------------------------------------------------------ */
/* Dictionaries (a{sv}) read into structs through a table of known keys.
 * Unknown keys and keys of an unexpected type are skipped, missing keys are
 * fine: each struct starts with a bit mask of the keys that were present, bit
 * i for the table's entry i. The same table, in the contract's order, writes
 * the JSON form. */

typedef enum FieldType {
        FIELD_STRING, /* char *, owned */
        FIELD_BOOL,   /* int */
        FIELD_INT32,  /* int32_t */
        FIELD_UINT32, /* uint32_t */
        FIELD_UINT64, /* uint64_t */
        FIELD_DICT,   /* a nested struct, described by .nested */
} FieldType;

typedef struct FieldMap FieldMap;
struct FieldMap {
        const char *key;
        FieldType type;
        size_t offset;
        const FieldMap *nested;
};

typedef struct Containment {
        uint32_t present;
        char *mechanism;
        int contained;
        int executed;
        char *unit;
        char *cgroup;
} Containment;

typedef struct Teardown {
        uint32_t present;
        int dead;
        char *method;
        uint64_t confirmed_at;
} Teardown;

typedef struct JobRecord {
        uint32_t present;
        char *id;
        char *session_id;
        char *command;
        char *cwd;
        uint32_t owner;
        char *status;
        int32_t exit_code;
        int32_t signal;
        int timed_out;
        uint32_t pid;
        char *start_token;
        uint64_t started_at;
        uint64_t finished_at;
        uint64_t output_bytes;
        Containment containment;
        Teardown teardown;
} JobRecord;

typedef struct KillResult {
        uint32_t present;
        int killed;
        Teardown teardown;
} KillResult;

typedef struct ReapResult {
        uint32_t present;
        uint32_t background_kept;
        uint32_t released;
        uint32_t orphans_killed;
} ReapResult;

#define FIELD(type_, key_, member_, kind_) { key_, kind_, offsetof(type_, member_), NULL }
#define FIELD_NESTED(type_, key_, member_, map_) { key_, FIELD_DICT, offsetof(type_, member_), map_ }

static const FieldMap containment_map[] = {
        FIELD(Containment, "mechanism", mechanism, FIELD_STRING),
        FIELD(Containment, "contained", contained, FIELD_BOOL),
        FIELD(Containment, "executed", executed, FIELD_BOOL),
        FIELD(Containment, "unit", unit, FIELD_STRING),
        FIELD(Containment, "cgroup", cgroup, FIELD_STRING),
        {},
};

static const FieldMap teardown_map[] = {
        FIELD(Teardown, "dead", dead, FIELD_BOOL),
        FIELD(Teardown, "method", method, FIELD_STRING),
        FIELD(Teardown, "confirmed_at", confirmed_at, FIELD_UINT64),
        {},
};

/* Keep in sync with the record table of the contract; the index of each
 * entry is its bit in JobRecord.present (see RECORD_HAS()). */
enum {
        RECORD_ID,
        RECORD_SESSION_ID,
        RECORD_COMMAND,
        RECORD_CWD,
        RECORD_OWNER,
        RECORD_STATUS,
        RECORD_EXIT_CODE,
        RECORD_SIGNAL,
        RECORD_TIMED_OUT,
        RECORD_PID,
        RECORD_START_TOKEN,
        RECORD_STARTED_AT,
        RECORD_FINISHED_AT,
        RECORD_OUTPUT_BYTES,
        RECORD_CONTAINMENT,
        RECORD_TEARDOWN,
};

static const FieldMap record_map[] = {
        [RECORD_ID] = FIELD(JobRecord, "id", id, FIELD_STRING),
        [RECORD_SESSION_ID] = FIELD(JobRecord, "session_id", session_id, FIELD_STRING),
        [RECORD_COMMAND] = FIELD(JobRecord, "command", command, FIELD_STRING),
        [RECORD_CWD] = FIELD(JobRecord, "cwd", cwd, FIELD_STRING),
        [RECORD_OWNER] = FIELD(JobRecord, "owner", owner, FIELD_UINT32),
        [RECORD_STATUS] = FIELD(JobRecord, "status", status, FIELD_STRING),
        [RECORD_EXIT_CODE] = FIELD(JobRecord, "exit_code", exit_code, FIELD_INT32),
        [RECORD_SIGNAL] = FIELD(JobRecord, "signal", signal, FIELD_INT32),
        [RECORD_TIMED_OUT] = FIELD(JobRecord, "timed_out", timed_out, FIELD_BOOL),
        [RECORD_PID] = FIELD(JobRecord, "pid", pid, FIELD_UINT32),
        [RECORD_START_TOKEN] = FIELD(JobRecord, "start_token", start_token, FIELD_STRING),
        [RECORD_STARTED_AT] = FIELD(JobRecord, "started_at", started_at, FIELD_UINT64),
        [RECORD_FINISHED_AT] = FIELD(JobRecord, "finished_at", finished_at, FIELD_UINT64),
        [RECORD_OUTPUT_BYTES] = FIELD(JobRecord, "output_bytes", output_bytes, FIELD_UINT64),
        [RECORD_CONTAINMENT] = FIELD_NESTED(JobRecord, "containment", containment, containment_map),
        [RECORD_TEARDOWN] = FIELD_NESTED(JobRecord, "teardown", teardown, teardown_map),
        {},
};

#define RECORD_HAS(rec, field) (((rec)->present & (UINT32_C(1) << (field))) != 0)
#define SUB_HAS(sub, index) (((sub)->present & (UINT32_C(1) << (index))) != 0)
/* Indices into containment_map / teardown_map. */
enum { CONTAINMENT_MECHANISM, CONTAINMENT_CONTAINED, CONTAINMENT_EXECUTED, CONTAINMENT_UNIT, CONTAINMENT_CGROUP };
enum { TEARDOWN_DEAD, TEARDOWN_METHOD, TEARDOWN_CONFIRMED_AT };

static const FieldMap kill_map[] = {
        FIELD(KillResult, "killed", killed, FIELD_BOOL),
        FIELD_NESTED(KillResult, "teardown", teardown, teardown_map),
        {},
};
enum { KILL_KILLED, KILL_TEARDOWN };

static const FieldMap reap_map[] = {
        FIELD(ReapResult, "background_kept", background_kept, FIELD_UINT32),
        FIELD(ReapResult, "released", released, FIELD_UINT32),
        FIELD(ReapResult, "orphans_killed", orphans_killed, FIELD_UINT32),
        {},
};
enum { REAP_BACKGROUND_KEPT, REAP_RELEASED, REAP_ORPHANS_KILLED };

static const char *field_signature(FieldType type) {
        switch (type) {
        case FIELD_STRING:
                return "s";
        case FIELD_BOOL:
                return "b";
        case FIELD_INT32:
                return "i";
        case FIELD_UINT32:
                return "u";
        case FIELD_UINT64:
                return "t";
        case FIELD_DICT:
                return "a{sv}";
        }
        return NULL;
}

static void dict_done(const FieldMap *map, void *base) {
        if (!base)
                return;

        for (const FieldMap *f = map; f->key; f++) {
                void *p = (uint8_t *) base + f->offset;

                if (f->type == FIELD_STRING) {
                        char **s = p;
                        free(*s);
                        *s = NULL;
                } else if (f->type == FIELD_DICT)
                        dict_done(f->nested, p);
        }
        *(uint32_t *) base = 0;
}

static void job_record_done(JobRecord *rec) {
        dict_done(record_map, rec);
}

static void kill_result_done(KillResult *k) {
        dict_done(kill_map, k);
}

static int dict_read_value(sd_bus_message *m, const FieldMap *f, void *p) {
        const char *s;
        int r;

        switch (f->type) {
        case FIELD_STRING: {
                char *copy, **dest = p;

                r = sd_bus_message_read_basic(m, 's', &s);
                if (r < 0)
                        return r;
                copy = strdup(s);
                if (!copy)
                        return -ENOMEM;
                free(*dest); /* a key given twice: the last one wins */
                *dest = copy;
                return 0;
        }
        case FIELD_BOOL:
                return sd_bus_message_read_basic(m, 'b', p);
        case FIELD_INT32:
                return sd_bus_message_read_basic(m, 'i', p);
        case FIELD_UINT32:
                return sd_bus_message_read_basic(m, 'u', p);
        case FIELD_UINT64:
                return sd_bus_message_read_basic(m, 't', p);
        case FIELD_DICT:
                return -EINVAL; /* handled by the caller */
        }
        return -EINVAL;
}

static int dict_read(sd_bus_message *m, const FieldMap *map, void *base) {
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;

        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const FieldMap *field = NULL;
                const char *key, *contents;
                size_t index = 0;

                r = sd_bus_message_read_basic(m, 's', &key);
                if (r < 0)
                        return r;

                for (const FieldMap *f = map; f->key; f++, index++)
                        if (streq(f->key, key)) {
                                field = f;
                                break;
                        }

                r = sd_bus_message_peek_type(m, NULL, &contents);
                if (r < 0)
                        return r;

                if (!field || !streq(contents, field_signature(field->type))) {
                        /* Unknown to this version, or not the type we know: skip it. */
                        r = sd_bus_message_skip(m, "v");
                        if (r < 0)
                                return r;
                } else {
                        void *p = (uint8_t *) base + field->offset;

                        r = sd_bus_message_enter_container(m, 'v', contents);
                        if (r < 0)
                                return r;
                        if (field->type == FIELD_DICT)
                                r = dict_read(m, field->nested, p);
                        else
                                r = dict_read_value(m, field, p);
                        if (r < 0)
                                return r;
                        r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;

                        *(uint32_t *) base |= UINT32_C(1) << index;
                }

                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;

        return sd_bus_message_exit_container(m);
}

static json_object *dict_to_json(const FieldMap *map, const void *base) {
        _cleanup_(json_object_putp) json_object *obj = NULL;
        uint32_t present = *(const uint32_t *) base;
        size_t index = 0;

        obj = json_object_new_object();
        if (!obj)
                return NULL;

        for (const FieldMap *f = map; f->key; f++, index++) {
                const void *p = (const uint8_t *) base + f->offset;
                json_object *value = NULL;

                if (!(present & (UINT32_C(1) << index)))
                        continue;

                switch (f->type) {
                case FIELD_STRING:
                        value = json_object_new_string(*(char *const *) p);
                        break;
                case FIELD_BOOL:
                        value = json_object_new_boolean(*(const int *) p != 0);
                        break;
                case FIELD_INT32:
                        value = json_object_new_int(*(const int32_t *) p);
                        break;
                case FIELD_UINT32:
                        value = json_object_new_int64(*(const uint32_t *) p);
                        break;
                case FIELD_UINT64:
                        value = json_object_new_uint64(*(const uint64_t *) p);
                        break;
                case FIELD_DICT:
                        value = dict_to_json(f->nested, p);
                        break;
                }
                if (!value)
                        return NULL;
                if (json_object_object_add(obj, f->key, value) < 0) {
                        json_object_put(value);
                        return NULL;
                }
        }

        return TAKE_PTR(obj);
}

static int print_json(json_object *obj) {
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

static int print_dict_json(const FieldMap *map, const void *base) {
        _cleanup_(json_object_putp) json_object *obj = NULL;

        obj = dict_to_json(map, base);
        if (!obj)
                return log_oom();
        return print_json(obj);
}

/* ------------------------------------------------------------------------ */
/* Clocks. */

static uint64_t now_monotonic_usec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

static uint64_t now_realtime_usec(void) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

/* ------------------------------------------------------------------------ */
/* The bus. */

static bool bus_error_means_daemon_missing(const sd_bus_error *error) {
        if (!sd_bus_error_is_set(error))
                return false;

        /* Nobody owns the name and activation is not set up, failed, or timed
         * out (only the bus daemon sends TimedOut; bgrund itself never does). */
        return sd_bus_error_has_names(error,
                                      SD_BUS_ERROR_SERVICE_UNKNOWN,
                                      SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                      DBUS_ERROR_TIMED_OUT) ||
                startswith_s(error->name, "org.freedesktop.DBus.Error.Spawn.");
}

static const char *bus_error_text(const sd_bus_error *error, int r) {
        if (sd_bus_error_is_set(error) && error->message && error->message[0])
                return error->message;
        return strerror(r < 0 ? -r : r);
}

/* One line for a failed method call. id may be NULL if the call is not about
 * one job. Returns r (negative). */
static int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r) {
        if (r >= 0)
                r = -EIO;

        if (bus_error_means_daemon_missing(error)) {
                log_daemon_missing();
                return r;
        }

        if (sd_bus_error_has_name(error, BGRUN_ERROR_NO_SUCH_JOB)) {
                if (id)
                        log_error("Job %s not found.", id);
                else
                        log_error("Job not found: %s", bus_error_text(error, r));
        } else if (sd_bus_error_has_names(error,
                                          BGRUN_ERROR_ACCESS_DENIED,
                                          SD_BUS_ERROR_ACCESS_DENIED,
                                          SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED))
                log_error("Access denied: %s", bus_error_text(error, r));
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_CONTAINMENT_REFUSED))
                log_error("Containment refused, nothing was started: %s", bus_error_text(error, r));
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_JOB_NOT_FINISHED))
                log_error("Job %s is still running; kill it or wait for it first.", id ? id : "");
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_INVALID_ARGS))
                log_error("Invalid argument: %s", bus_error_text(error, r));
        else if (sd_bus_error_has_name(error, SD_BUS_ERROR_NO_REPLY) || r == -ETIMEDOUT)
                log_error("bgrund did not answer %s in time.", method);
        else if (sd_bus_error_has_names(error, SD_BUS_ERROR_UNKNOWN_METHOD, SD_BUS_ERROR_UNKNOWN_OBJECT,
                                        SD_BUS_ERROR_UNKNOWN_INTERFACE))
                log_error("bgrund does not support %s (is it the same version as bgrun?): %s",
                          method, bus_error_text(error, r));
        else
                log_error("%s failed: %s", method, bus_error_text(error, r));

        return r;
}

static int bus_connect(sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *address;
        int r;

        address = getenv("BGRUN_BUS_ADDRESS");
        if (address && address[0]) {
                r = sd_bus_new(&bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to allocate bus: %m");
                r = sd_bus_set_address(bus, address);
                if (r < 0)
                        return log_error_errno(r, "Invalid bus address '%s': %m", address);
                r = sd_bus_set_bus_client(bus, true);
                if (r < 0)
                        return log_error_errno(r, "Failed to set bus client mode: %m");
                r = sd_bus_start(bus);
        } else
                r = sd_bus_open_system(&bus);

        if (r == -ENOENT || r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOTCONN) {
                /* No bus at all: for the user that is the same as no bgrund. */
                log_daemon_missing();
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the %s bus: %m", address ? "bgrun" : "system");

        *ret = TAKE_PTR(bus);
        return 0;
}

static int manager_new_call(sd_bus *bus, const char *method, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE,
                                           method);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s call: %m", method);

        /* Let polkit ask for a password when a person is there to type it. */
        r = sd_bus_message_set_allow_interactive_authorization(m, isatty(STDIN_FILENO) > 0);
        if (r < 0)
                return log_error_errno(r, "Failed to set interactive authorization: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

/* Calls m; on failure logs one line (about job id, if not NULL) and returns
 * the negative error. timeout 0 is sd-bus' default, USEC_INFINITY none. */
static int manager_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id,
                        sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call(bus, m, timeout, &error, ret_reply);
        if (r < 0)
                return log_call_error(sd_bus_message_get_member(m), id, &error, r);
        return 0;
}

static int log_parse_error(const char *method, int r) {
        return log_error_errno(r, "Failed to parse the reply to %s: %m", method);
}

/* Sends a method call with one job id (and maybe a timeout) and reads the
 * a{sv} reply through map into base. */
static int call_id_dict(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                        uint64_t call_timeout, const FieldMap *map, void *base) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = manager_new_call(bus, method, &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', id);
        if (r >= 0 && wait_timeout)
                r = sd_bus_message_append_basic(m, 't', wait_timeout);
        if (r < 0)
                return log_error_errno(r, "Failed to build %s call: %m", method);

        r = manager_call(bus, m, call_timeout, id, &reply);
        if (r < 0)
                return r;

        r = dict_read(reply, map, base);
        if (r < 0) {
                dict_done(map, base);
                return log_parse_error(method, r);
        }
        return 0;
}

static int get_record(sd_bus *bus, const char *id, JobRecord *ret) {
        return call_id_dict(bus, "Get", id, NULL, 0, record_map, ret);
}

static int wait_record(sd_bus *bus, const char *id, uint64_t timeout, JobRecord *ret) {
        uint64_t call_timeout;

        if (timeout == USEC_INFINITY || timeout > USEC_INFINITY - CALL_MARGIN_USEC - 1)
                call_timeout = USEC_INFINITY;
        else
                call_timeout = timeout + CALL_MARGIN_USEC;

        return call_id_dict(bus, "Wait", id, &timeout, call_timeout, record_map, ret);
}

/* ------------------------------------------------------------------------ */
/* What a record says. */

static bool record_is_running(const JobRecord *rec) {
        if (RECORD_HAS(rec, RECORD_STATUS))
                return streq(rec->status, "running");
        if (RECORD_HAS(rec, RECORD_FINISHED_AT))
                return rec->finished_at == 0;
        return false; /* know nothing: do not wait forever */
}

static bool record_timed_out(const JobRecord *rec) {
        return (RECORD_HAS(rec, RECORD_TIMED_OUT) && rec->timed_out) ||
                (RECORD_HAS(rec, RECORD_STATUS) && streq(rec->status, "timed_out"));
}

static int record_signal(const JobRecord *rec) {
        return RECORD_HAS(rec, RECORD_SIGNAL) && rec->signal > 0 ? rec->signal : 0;
}

/* The exit status of bgrun for an ended job, as timeout(1) and shells do it. */
static int record_exit_status(const JobRecord *rec) {
        if (record_timed_out(rec))
                return EXIT_TIMEOUT;
        if (record_signal(rec) > 0)
                return 128 + (record_signal(rec) & 0x7f);
        if (RECORD_HAS(rec, RECORD_EXIT_CODE) && rec->exit_code >= 0 && rec->exit_code <= 255)
                return rec->exit_code;
        return EXIT_FAILURE;
}

static const char *record_id(const JobRecord *rec, const char *fallback) {
        return RECORD_HAS(rec, RECORD_ID) ? rec->id : fallback;
}

/* One line: how the job ended (or that it has not). */
static void format_outcome(const JobRecord *rec, char *buf, size_t len) {
        int sig = record_signal(rec);

        if (record_is_running(rec))
                snprintf(buf, len, "is still running");
        else if (record_timed_out(rec))
                snprintf(buf, len, "timed out%s", sig > 0 ? " and was killed" : "");
        else if (sig > 0)
                snprintf(buf, len, "was killed by signal %d (%s)", sig, strsignal(sig));
        else if (RECORD_HAS(rec, RECORD_EXIT_CODE) && rec->exit_code >= 0)
                snprintf(buf, len, "%s with status %" PRIi32,
                         RECORD_HAS(rec, RECORD_STATUS) && streq(rec->status, "failed") ? "failed" : "exited",
                         rec->exit_code);
        else
                snprintf(buf, len, "%s", RECORD_HAS(rec, RECORD_STATUS) ? rec->status : "ended");
}

/* Like wait_record(), but keeps waiting if the daemon returns early (it may
 * cap how long one Wait call blocks) until the job ended or timeout passed. */
static int wait_until_ended(sd_bus *bus, const char *id, uint64_t timeout, JobRecord *ret) {
        uint64_t deadline = USEC_INFINITY, remaining = timeout;
        int r;

        if (timeout != USEC_INFINITY && timeout < USEC_INFINITY - now_monotonic_usec())
                deadline = now_monotonic_usec() + timeout;

        for (;;) {
                JobRecord rec = {};
                uint64_t now;

                r = wait_record(bus, id, remaining, &rec);
                if (r < 0)
                        return r;

                now = now_monotonic_usec();
                if (!record_is_running(&rec) || (deadline != USEC_INFINITY && now >= deadline)) {
                        *ret = rec;
                        return 0;
                }
                job_record_done(&rec);

                if (deadline != USEC_INFINITY)
                        remaining = deadline - now;
        }
}

/* ------------------------------------------------------------------------ */
/* Job output: through the descriptor from OpenOutput, or, where fd passing
 * does not work, in chunks through ReadOutput. */

typedef struct OutputSource {
        const char *id;
        int fd;         /* -EBADF: use ReadOutput */
        bool regular;   /* a file: read() returning 0 means "nothing more yet" */
        uint64_t offset; /* ReadOutput only */
} OutputSource;

static void output_source_done(OutputSource *src) {
        src->fd = safe_close(src->fd);
}

static int write_all(int fd, const uint8_t *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int write_stdout(const void *p, size_t n) {
        int r;

        r = write_all(STDOUT_FILENO, p, n);
        if (r < 0)
                return log_error_errno(r, "Failed to write output: %m");
        return 0;
}

static bool error_means_no_fd_passing(const sd_bus_error *error, int r) {
        return sd_bus_error_has_names(error,
                                      SD_BUS_ERROR_UNKNOWN_METHOD,
                                      SD_BUS_ERROR_NOT_SUPPORTED,
                                      SD_BUS_ERROR_INCONSISTENT_MESSAGE) ||
                (!sd_bus_error_is_set(error) && (r == -EOPNOTSUPP || r == -EBADMSG));
}

static int output_open(sd_bus *bus, const char *id, OutputSource *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r, bus_fd;

        *ret = (OutputSource) { .id = id, .fd = -EBADF };

        r = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD);
        if (r <= 0)
                return 0; /* ReadOutput it is */

        r = manager_new_call(bus, "OpenOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', id);
        if (r < 0)
                return log_error_errno(r, "Failed to build OpenOutput call: %m");

        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0) {
                if (error_means_no_fd_passing(&error, r))
                        return 0;
                return log_call_error("OpenOutput", id, &error, r);
        }

        r = sd_bus_message_read_basic(reply, 'h', &bus_fd);
        if (r < 0)
                return log_parse_error("OpenOutput", r);

        /* The message owns bus_fd; keep our own. */
        fd = fcntl(bus_fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0)
                return log_error_errno(errno, "Failed to duplicate output descriptor: %m");
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat output descriptor: %m");

        ret->fd = TAKE_FD(fd);
        ret->regular = S_ISREG(st.st_mode);
        return 0;
}

/* Copies what the descriptor has now. For a pipe or socket, waits up to
 * wait_ms for more. Returns 1 at a definitive end (a pipe's EOF), else 0. */
static int output_pump_fd(OutputSource *src, int wait_ms) {
        uint8_t buf[64 * 1024];
        int r;

        for (;;) {
                ssize_t n;

                if (!src->regular) {
                        struct pollfd pfd = { .fd = src->fd, .events = POLLIN };

                        r = poll(&pfd, 1, wait_ms);
                        if (r < 0) {
                                if (errno == EINTR)
                                        continue;
                                return log_error_errno(errno, "Failed to poll job output: %m");
                        }
                        if (r == 0)
                                return 0;
                }

                n = read(src->fd, buf, sizeof buf);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return log_error_errno(errno, "Failed to read job output: %m");
                }
                if (n == 0)
                        return src->regular ? 0 : 1;

                r = write_stdout(buf, (size_t) n);
                if (r < 0)
                        return r;
        }
}

/* One ReadOutput call. Returns 1 when the daemon says the output is complete,
 * else 0; *ret_size is how many bytes came. */
static int output_read_chunk(sd_bus *bus, OutputSource *src, size_t *ret_size) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const void *data;
        size_t size;
        uint64_t next;
        int complete, r;

        r = manager_new_call(bus, "ReadOutput", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "stu", src->id, src->offset, (uint32_t) READ_OUTPUT_CHUNK);
        if (r < 0)
                return log_error_errno(r, "Failed to build ReadOutput call: %m");

        r = manager_call(bus, m, 0, src->id, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_read_array(reply, 'y', &data, &size);
        if (r >= 0)
                r = sd_bus_message_read(reply, "tb", &next, &complete);
        if (r < 0)
                return log_parse_error("ReadOutput", r);

        r = write_stdout(data, size);
        if (r < 0)
                return r;

        /* Trust "next" only if it moves forward; else count what we got. */
        src->offset = next > src->offset ? next : src->offset + size;
        *ret_size = size;
        return complete ? 1 : 0;
}

/* Copies all output there is now. Returns 1 at a definitive end. */
static int output_pump(sd_bus *bus, OutputSource *src, int wait_ms) {
        int r;

        if (fflush(stdout) == EOF)
                return log_error_errno(errno, "Failed to write output: %m");

        if (src->fd >= 0)
                return output_pump_fd(src, wait_ms);

        for (;;) {
                size_t size = 0;

                r = output_read_chunk(bus, src, &size);
                if (r != 0)
                        return r;
                if (size == 0)
                        return 0;
        }
}

/* Streams the job's output until the job has ended and every byte was
 * written; the final record goes to ret. */
static int output_follow(sd_bus *bus, OutputSource *src, JobRecord *ret) {
        int r;

        for (;;) {
                JobRecord rec = {};

                r = output_pump(bus, src, 0);
                if (r < 0)
                        return r;

                /* Blocks in the daemon for a moment: this is our pacing. */
                r = wait_record(bus, src->id, FOLLOW_POLL_USEC, &rec);
                if (r < 0)
                        return r;

                if (!record_is_running(&rec)) {
                        /* The job has ended; what it wrote is all there. For a pipe
                         * give the writer a moment to close its end. */
                        r = output_pump(bus, src, 1000);
                        if (r < 0) {
                                job_record_done(&rec);
                                return r;
                        }
                        *ret = rec;
                        return 0;
                }
                job_record_done(&rec);
        }
}

/* ------------------------------------------------------------------------ */
/* Human output. */

/* Prints s with control characters shown as spaces, cut to max_columns
 * (SIZE_MAX: no limit) with "..." at the end. Columns are counted per UTF-8
 * character, which is right for everything but wide glyphs. */
static void print_cell(const char *s, size_t max_columns) {
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

static void print_record(const JobRecord *rec, const char *id) {
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

/* ------------------------------------------------------------------------ */
/* Verbs. args[0] is the verb, the rest its arguments. */

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

static int get_directory(char **ret) {
        _cleanup_free_ char *cwd = NULL;

        cwd = getcwd(NULL, 0);
        if (!cwd)
                return log_error_errno(errno, "Failed to get the current directory: %m");

        if (!arg_directory) {
                *ret = TAKE_PTR(cwd);
                return 0;
        }
        if (arg_directory[0] == '/') {
                *ret = strdup(arg_directory);
                return *ret ? 0 : log_oom();
        }
        /* The daemon has its own working directory: send an absolute path. */
        if (asprintf(ret, "%s/%s", streq(cwd, "/") ? "" : cwd, arg_directory) < 0)
                return log_oom();
        return 0;
}

static int append_launch_options(sd_bus_message *m) {
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r < 0)
                return r;

        if (arg_max_runtime_set) {
                r = sd_bus_message_append(m, "{sv}", "MaxRuntimeUSec", "t", arg_max_runtime_usec);
                if (r < 0)
                        return r;
        }
        if (arg_n_environment > 0) {
                r = sd_bus_message_open_container(m, 'e', "sv");
                if (r >= 0)
                        r = sd_bus_message_append_basic(m, 's', "Environment");
                if (r >= 0)
                        r = sd_bus_message_open_container(m, 'v', "as");
                if (r >= 0)
                        r = sd_bus_message_append_strv(m, arg_environment);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r >= 0)
                        r = sd_bus_message_close_container(m);
                if (r < 0)
                        return r;
        }
        if (arg_memory_max_set) {
                r = sd_bus_message_append(m, "{sv}", "MemoryMax", "t", arg_memory_max);
                if (r < 0)
                        return r;
        }
        if (arg_tasks_max_set) {
                r = sd_bus_message_append(m, "{sv}", "TasksMax", "t", arg_tasks_max);
                if (r < 0)
                        return r;
        }
        if (arg_cpu_quota_set) {
                r = sd_bus_message_append(m, "{sv}", "CPUQuotaPerSecUSec", "t", arg_cpu_quota_per_sec_usec);
                if (r < 0)
                        return r;
        }
        if (arg_user) {
                r = sd_bus_message_append(m, "{sv}", "User", "s", arg_user);
                if (r < 0)
                        return r;
        }

        return sd_bus_message_close_container(m);
}

/* Tells on stderr how a job we waited for ended, if not plainly. */
static void note_outcome(const JobRecord *rec, const char *id) {
        char buf[128];

        if (record_timed_out(rec) || record_signal(rec) > 0) {
                format_outcome(rec, buf, sizeof buf);
                log_error("Job %s %s.", record_id(rec, id), buf);
        }
}

static int wait_and_stream(sd_bus *bus, const char *id) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        _cleanup_(job_record_done) JobRecord rec = {};
        int r;

        r = output_open(bus, id, &src);
        if (r < 0)
                return r;

        r = output_follow(bus, &src, &rec);
        if (r < 0)
                return r;

        note_outcome(&rec, id);
        return record_exit_status(&rec);
}

static int verb_run(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *command = NULL, *directory = NULL;
        const char *id, *path;
        int r;

        command = join_words(args + 1);
        if (!command)
                return log_oom();

        r = get_directory(&directory);
        if (r < 0)
                return r;

        r = manager_new_call(bus, "Launch", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "sss", command, arg_session ? arg_session : "", directory);
        if (r >= 0)
                r = append_launch_options(m);
        if (r < 0)
                return log_error_errno(r, "Failed to build Launch call: %m");

        r = manager_call(bus, m, 0, NULL, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_read(reply, "so", &id, &path);
        if (r < 0)
                return log_parse_error("Launch", r);

        if (arg_wait && !arg_json)
                return wait_and_stream(bus, id);

        if (arg_json) {
                _cleanup_(job_record_done) JobRecord rec = {};

                /* With --json, --wait prints the final record instead of the
                 * output: mixing both would not be JSON. */
                if (arg_wait)
                        r = wait_until_ended(bus, id, USEC_INFINITY, &rec);
                else
                        r = get_record(bus, id, &rec);
                if (r < 0)
                        return r;

                r = print_dict_json(record_map, &rec);
                if (r < 0)
                        return r;
                return arg_wait ? record_exit_status(&rec) : EXIT_SUCCESS;
        }

        if (puts(id) == EOF)
                return log_error_errno(errno, "Failed to write job id: %m");
        return EXIT_SUCCESS;
}

static int verb_status(sd_bus *bus, char **args) {
        _cleanup_(job_record_done) JobRecord rec = {};
        int r;

        r = get_record(bus, args[1], &rec);
        if (r < 0)
                return r;

        if (arg_json)
                return print_dict_json(record_map, &rec);

        print_record(&rec, args[1]);
        return EXIT_SUCCESS;
}

static int verb_logs(sd_bus *bus, char **args) {
        _cleanup_(output_source_done) OutputSource src = { .fd = -EBADF };
        int r;

        r = output_open(bus, args[1], &src);
        if (r < 0)
                return r;

        if (arg_follow) {
                _cleanup_(job_record_done) JobRecord rec = {};

                r = output_follow(bus, &src, &rec);
        } else
                r = output_pump(bus, &src, 0);
        if (r < 0)
                return r;

        return EXIT_SUCCESS;
}

static int verb_kill(sd_bus *bus, char **args) {
        _cleanup_(kill_result_done) KillResult result = {};
        const char *id = args[1];
        const Teardown *t = &result.teardown;
        bool confirmed;
        int r;

        r = call_id_dict(bus, "Kill", id, NULL, KILL_CALL_TIMEOUT_USEC, kill_map, &result);
        if (r < 0)
                return r;

        if (arg_json)
                return print_dict_json(kill_map, &result);

        confirmed = SUB_HAS(&result, KILL_TEARDOWN) && SUB_HAS(t, TEARDOWN_DEAD) && t->dead;

        if (SUB_HAS(&result, KILL_KILLED) && result.killed)
                printf("Job %s killed", id);
        else
                printf("Job %s was not running", id);
        if (confirmed)
                printf(", nothing of it is left alive");
        if (SUB_HAS(t, TEARDOWN_METHOD) && t->method[0]) {
                fputs(" (", stdout);
                print_cell(t->method, SIZE_MAX);
                putchar(')');
        }
        puts(".");

        if (SUB_HAS(&result, KILL_TEARDOWN) && SUB_HAS(t, TEARDOWN_DEAD) && !t->dead)
                log_error("Warning: the teardown of job %s is not confirmed; processes of it may still be alive.", id);

        return EXIT_SUCCESS;
}

typedef struct JobListEntry {
        const char *id, *session, *status, *command, *path;
} JobListEntry;

static int print_job_list(const JobListEntry *jobs, size_t n) {
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

static int print_job_list_json(const JobListEntry *jobs, size_t n) {
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

static int verb_list(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ JobListEntry *jobs = NULL;
        size_t n = 0, allocated = 0;
        int r;

        r = manager_new_call(bus, "ListJobs", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', arg_session ? arg_session : "");
        if (r < 0)
                return log_error_errno(r, "Failed to build ListJobs call: %m");

        r = manager_call(bus, m, 0, NULL, &reply);
        if (r < 0)
                return r;

        r = sd_bus_message_enter_container(reply, 'a', "(sssso)");
        if (r < 0)
                return log_parse_error("ListJobs", r);

        for (;;) {
                JobListEntry e;

                r = sd_bus_message_read(reply, "(sssso)", &e.id, &e.session, &e.status, &e.command, &e.path);
                if (r < 0)
                        return log_parse_error("ListJobs", r);
                if (r == 0)
                        break;

                if (n >= allocated) {
                        size_t new_allocated = allocated ? allocated * 2 : 16;
                        JobListEntry *p = reallocarray(jobs, new_allocated, sizeof *jobs);

                        if (!p)
                                return log_oom();
                        jobs = p;
                        allocated = new_allocated;
                }
                jobs[n++] = e;
        }

        r = sd_bus_message_exit_container(reply);
        if (r < 0)
                return log_parse_error("ListJobs", r);

        if (arg_json)
                return print_job_list_json(jobs, n);
        return print_job_list(jobs, n);
}

static int verb_wait(sd_bus *bus, char **args) {
        _cleanup_(job_record_done) JobRecord rec = {};
        const char *id = args[1];
        char buf[128];
        int r;

        r = wait_until_ended(bus, id, arg_timeout_usec, &rec);
        if (r < 0)
                return r;

        if (arg_json) {
                r = print_dict_json(record_map, &rec);
                if (r < 0)
                        return r;
        }

        if (record_is_running(&rec)) {
                log_error("Job %s still running after %s.", record_id(&rec, id),
                          arg_timeout_string ? arg_timeout_string : format_duration(buf, sizeof buf, arg_timeout_usec));
                return EXIT_FAILURE;
        }

        if (!arg_json) {
                format_outcome(&rec, buf, sizeof buf);
                printf("Job %s %s.\n", record_id(&rec, id), buf);
        }
        return record_exit_status(&rec);
}

static int verb_forget(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = manager_new_call(bus, "Forget", &m);
        if (r < 0)
                return r;
        r = sd_bus_message_append_basic(m, 's', args[1]);
        if (r < 0)
                return log_error_errno(r, "Failed to build Forget call: %m");

        r = manager_call(bus, m, 0, args[1], NULL);
        if (r < 0)
                return r;
        return EXIT_SUCCESS;
}

static int verb_reap(sd_bus *bus, char **args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        ReapResult result = {};
        int r;

        r = manager_new_call(bus, "Reap", &m);
        if (r < 0)
                return r;

        r = manager_call(bus, m, KILL_CALL_TIMEOUT_USEC, NULL, &reply);
        if (r < 0)
                return r;

        r = dict_read(reply, reap_map, &result);
        if (r < 0)
                return log_parse_error("Reap", r);

        if (arg_json)
                return print_dict_json(reap_map, &result);

        printf("Background jobs kept:    %" PRIu32 "\n"
               "Containments released:   %" PRIu32 "\n"
               "Orphans killed:          %" PRIu32 "\n",
               result.background_kept, result.released, result.orphans_killed);
        return EXIT_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Command line. */

#define VERB_ANY ((unsigned) -1)

typedef struct Verb {
        const char *name;
        unsigned min_args, max_args; /* counting the verb itself */
        unsigned options;            /* OptionFlag: the options it takes */
        int (*dispatch)(sd_bus *bus, char **args);
} Verb;

static const Verb verbs[] = {
        { "run", 2, VERB_ANY,
          OPTION_SESSION | OPTION_DIRECTORY | OPTION_TIMEOUT | OPTION_SETENV | OPTION_PROPERTY | OPTION_WAIT | OPTION_JSON,
          verb_run },
        { "status", 2, 2, OPTION_JSON, verb_status },
        { "show", 2, 2, OPTION_JSON, verb_status },
        { "logs", 2, 2, OPTION_FOLLOW, verb_logs },
        { "kill", 2, 2, OPTION_JSON, verb_kill },
        { "list", 1, 1, OPTION_SESSION | OPTION_JSON, verb_list },
        { "ls", 1, 1, OPTION_SESSION | OPTION_JSON, verb_list },
        { "wait", 2, 2, OPTION_TIMEOUT | OPTION_JSON, verb_wait },
        { "forget", 2, 2, 0, verb_forget },
        { "reap", 1, 1, OPTION_JSON, verb_reap },
};

static const Verb *arg_verb = NULL;
static char **arg_args = NULL; /* the verb and its arguments; pointers into argv */

static const struct {
        OptionFlag flag;
        const char *name;
} option_names[] = {
        { OPTION_SESSION, "--session" },
        { OPTION_DIRECTORY, "--directory" },
        { OPTION_TIMEOUT, "--timeout" },
        { OPTION_SETENV, "--setenv" },
        { OPTION_PROPERTY, "--property" },
        { OPTION_WAIT, "--wait" },
        { OPTION_JSON, "--json" },
        { OPTION_FOLLOW, "--follow" },
};

static void help(void) {
        printf("bgrun [OPTIONS...] COMMAND ...\n"
               "\n"
               "Run commands as background jobs of bgrund, and look after them.\n"
               "\n"
               "Commands:\n"
               "  run [OPTIONS] -- COMMAND...  Start COMMAND as a background job, print its ID\n"
               "  status ID                    Show the job's record (alias: show)\n"
               "  logs ID                      Print the job's output (stdout and stderr)\n"
               "  kill ID                      End the job and everything it started\n"
               "  list                         List jobs (alias: ls)\n"
               "  wait ID                      Wait for the job to end\n"
               "  forget ID                    Remove an ended job's record and output\n"
               "  reap                         Re-check all jobs, as bgrund does at start (admin)\n"
               "\n"
               "Options:\n"
               "  -h --help                    Show this help\n"
               "     --version                 Show the version\n"
               "  -s --session=SESSION         run: tag the job with SESSION; list: only SESSION\n"
               "  -C --directory=DIR           run: working directory (default: the current one)\n"
               "  -t --timeout=DURATION        run: kill the job after DURATION (MaxRuntimeUSec)\n"
               "                               wait: give up after DURATION (default: never)\n"
               "  -E --setenv=NAME=VALUE       run: set an environment variable (repeatable)\n"
               "  -p --property=PROP=VALUE     run: set a limit (repeatable):\n"
               "                                 MemoryMax=BYTES (K, M, G, T: powers of 1024; or infinity)\n"
               "                                 TasksMax=N (or infinity)\n"
               "                                 CPUQuotaPerSecUSec=PERCENT%% or DURATION (50%% = 500ms)\n"
               "                                 MaxRuntimeUSec=DURATION\n"
               "                                 User=NAME (root only)\n"
               "     --wait                    run: stream the output, exit with the job's status\n"
               "                               (with --json: print the final record instead)\n"
               "  -f --follow                  logs: keep printing until the job ends\n"
               "     --json                    Print records as JSON\n"
               "\n"
               "The words of COMMAND are joined with single spaces into one string that\n"
               "/bin/sh -c runs, as with sh -c \"$*\": quote as you would for sh -c, e.g.\n"
               "  bgrun run -- 'make -j4 > build.log 2>&1; echo done'\n"
               "Options after the first word of COMMAND belong to COMMAND.\n"
               "\n"
               "DURATION reads like systemd's: 90, 90s, 500ms, 5min, 1h30min.\n"
               "\n"
               "Exit status: 0 on success, 1 on failure, 2 on a usage error. run --wait and\n"
               "wait exit with the job's exit status, 128+N if signal N ended it, 124 if it\n"
               "timed out.\n"
               "\n"
               "Set BGRUN_BUS_ADDRESS to talk to a bus other than the system bus.\n");
}

static const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

static int add_positional(char ***list, size_t *n, char *arg) {
        char **p = reallocarray(*list, *n + 2, sizeof(char *));

        if (!p)
                return log_oom();
        p[(*n)++] = arg;
        p[*n] = NULL;
        *list = p;
        return 0;
}

/* Returns > 0 to go on, 0 to exit successfully (--help), < 0 on a usage
 * error (already logged). */
static int parse_argv(int argc, char *argv[]) {
        enum {
                ARG_VERSION = 0x100,
                ARG_WAIT,
                ARG_JSON,
        };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "session", required_argument, NULL, 's' },
                { "directory", required_argument, NULL, 'C' },
                { "timeout", required_argument, NULL, 't' },
                { "setenv", required_argument, NULL, 'E' },
                { "property", required_argument, NULL, 'p' },
                { "wait", no_argument, NULL, ARG_WAIT },
                { "json", no_argument, NULL, ARG_JSON },
                { "follow", no_argument, NULL, 'f' },
                {},
        };
        size_t n_args = 0;
        int c, r;

        /* "+": stop at the first word that is not an option, so that "run"
         * can hand everything after its first COMMAND word to the command.
         * Other verbs take options before and after their arguments. */
        opterr = 0;
        for (;;) {
                c = getopt_long(argc, argv, "+:hs:C:t:E:p:f", options, NULL);
                if (c < 0) {
                        bool after_dashes;

                        if (optind >= argc)
                                break;

                        after_dashes = optind > 1 && streq(argv[optind - 1], "--");
                        if (after_dashes || (n_args >= 1 && arg_verb == find_verb("run"))) {
                                /* The rest is positional: COMMAND for run. */
                                for (; optind < argc; optind++) {
                                        r = add_positional(&arg_args, &n_args, argv[optind]);
                                        if (r < 0)
                                                return r;
                                }
                                break;
                        }

                        r = add_positional(&arg_args, &n_args, argv[optind]);
                        if (r < 0)
                                return r;
                        if (n_args == 1)
                                arg_verb = find_verb(argv[optind]);
                        optind++;
                        continue;
                }

                switch (c) {
                case 'h':
                        help();
                        return 0;

                case ARG_VERSION:
                        printf("bgrun %s\n", BGRUN_VERSION);
                        return 0;

                case 's':
                        arg_session = optarg;
                        arg_options_seen |= OPTION_SESSION;
                        break;

                case 'C':
                        if (!optarg[0])
                                return log_usage_error("--directory= needs a directory.");
                        arg_directory = optarg;
                        arg_options_seen |= OPTION_DIRECTORY;
                        break;

                case 't':
                        /* run: MaxRuntimeUSec; wait: how long to wait. */
                        r = parse_duration_arg(optarg, "--timeout", &arg_timeout_usec);
                        if (r < 0)
                                return r;
                        arg_timeout_string = optarg;
                        arg_options_seen |= OPTION_TIMEOUT;
                        break;

                case 'E': {
                        const char *eq = strchr(optarg, '=');

                        if (!eq || eq == optarg)
                                return log_usage_error("Invalid environment assignment '%s', expected NAME=VALUE.",
                                                       optarg);
                        r = add_positional(&arg_environment, &arg_n_environment, optarg);
                        if (r < 0)
                                return r;
                        arg_options_seen |= OPTION_SETENV;
                        break;
                }

                case 'p':
                        r = parse_property(optarg);
                        if (r < 0)
                                return r;
                        arg_options_seen |= OPTION_PROPERTY;
                        break;

                case ARG_WAIT:
                        arg_wait = true;
                        arg_options_seen |= OPTION_WAIT;
                        break;

                case ARG_JSON:
                        arg_json = true;
                        arg_options_seen |= OPTION_JSON;
                        break;

                case 'f':
                        arg_follow = true;
                        arg_options_seen |= OPTION_FOLLOW;
                        break;

                case ':':
                        if (optopt != 0)
                                return log_usage_error("Option '-%c' needs an argument.", optopt);
                        return log_usage_error("Option '%s' needs an argument.", argv[optind - 1]);

                case '?':
                        if (optopt != 0)
                                return log_usage_error("Unknown option '-%c'. See 'bgrun --help'.", optopt);
                        return log_usage_error("Unknown option '%s'. See 'bgrun --help'.", argv[optind - 1]);

                default:
                        return log_usage_error("Unexpected option code %d.", c);
                }
        }

        if (n_args == 0)
                return log_usage_error("Missing command. See 'bgrun --help'.");
        if (!arg_verb)
                return log_usage_error("Unknown command '%s'. See 'bgrun --help'.", arg_args[0]);

        if (n_args < arg_verb->min_args) {
                if (arg_verb->dispatch == verb_run)
                        return log_usage_error("Missing the command to run: bgrun run [OPTIONS] -- COMMAND...");
                return log_usage_error("Missing job ID: bgrun %s ID", arg_verb->name);
        }
        if (arg_verb->max_args != VERB_ANY && n_args > arg_verb->max_args)
                return log_usage_error("Too many arguments for '%s'. See 'bgrun --help'.", arg_verb->name);

        for (size_t i = 0; i < ELEMENTSOF(option_names); i++)
                if ((arg_options_seen & option_names[i].flag) && !(arg_verb->options & option_names[i].flag))
                        return log_usage_error("Option %s does not apply to '%s'.", option_names[i].name,
                                               arg_verb->name);

        /* -t means the wall-clock limit for run; -p MaxRuntimeUSec= is the same. */
        if (arg_verb->dispatch == verb_run && (arg_options_seen & OPTION_TIMEOUT) && !arg_max_runtime_set) {
                arg_max_runtime_usec = arg_timeout_usec;
                arg_max_runtime_set = true;
        }

        return 1;
}

static int run(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = parse_argv(argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        r = bus_connect(&bus);
        if (r < 0)
                return r;

        return arg_verb->dispatch(bus, arg_args);
}

int main(int argc, char *argv[]) {
        int r;

        r = run(argc, argv);

        free(arg_args);
        free(arg_environment);

        if (fflush(stdout) == EOF && r >= 0) {
                log_error_errno(errno, "Failed to write output: %m");
                return EXIT_FAILURE;
        }
        return r < 0 ? EXIT_FAILURE : r;
}
