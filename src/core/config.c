/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "config.h"
#include "duration.h"
#include "fileio.h"
#include "job-record.h"
#include "macro.h"
#include "parse-util.h"

#define CONFIG_FILE_MAX (1024 * 1024)
#define WHITESPACE " \t\r\n"

static const char *const containment_mode_table[] = {
        [CONTAINMENT_ENFORCING] = "enforcing",
        [CONTAINMENT_REPORT_ONLY] = "report-only",
};

const char *containment_mode_to_string(ContainmentMode m) {
        if ((unsigned) m >= ELEMENTSOF(containment_mode_table))
                return NULL;
        return containment_mode_table[m];
}

int containment_mode_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(containment_mode_table); i++)
                if (streq(s, containment_mode_table[i]))
                        return (int) i;
        return -EINVAL;
}

void config_init(BgrunConfig *c) {
        *c = (BgrunConfig) {
                .mode = CONTAINMENT_ENFORCING,
                .mechanisms = { MECHANISM_SYSTEMD, MECHANISM_CGROUPFS, MECHANISM_PROCESS_GROUP },
                .n_mechanisms = 3,
                .limits = {
                        .max_running_jobs = 512,
                        .max_queued_jobs = 1000,
                        .max_records = 10000,
                        .retention_usec = 7 * 24 * 3600 * USEC_PER_SEC,
                        .output_max_bytes = JOB_OUTPUT_MAX_BYTES_DEFAULT,
                        .output_max_bytes_per_user = 4ULL << 30,
                        .tasks_max = 4096,
                        .memory_max = UINT64_MAX,
                        .cpu_weight = 100,
                        .keep_free = JOB_KEEP_FREE_DEFAULT,
                        .default_max_runtime_usec = UINT64_MAX,
                        .max_runtime_usec = UINT64_MAX,
                },
        };
}

/* Sets *error (when wanted) and returns r, so that every failure site is a
 * single "return config_error(...)". Out of memory wins over the message. */
_printf_(3, 4)
static int config_error(char **error, int r, const char *fmt, ...) {
        va_list ap;
        char *s;
        int k;

        if (!error)
                return r;

        va_start(ap, fmt);
        k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;

        free(*error);
        *error = s;
        return r;
}

static char *strip(char *s) {
        char *e;

        s += strspn(s, WHITESPACE);
        e = s + strlen(s);
        while (e > s && strchr(WHITESPACE, e[-1]))
                e--;
        *e = '\0';
        return s;
}

static int parse_mechanisms(const char *path, unsigned line, const char *key, char *value,
                            BgrunConfig *c, char **error) {
        Mechanism list[_MECHANISM_MAX];
        unsigned n = 0;
        char *save = NULL;

        for (char *w = strtok_r(value, WHITESPACE, &save); w; w = strtok_r(NULL, WHITESPACE, &save)) {
                int m = mechanism_from_string(w);

                if (m < 0)
                        return config_error(error, -EINVAL,
                                            "%s:%u: %s=: invalid value '%s' (expected %s)",
                                            path, line, key, w, mechanism_names());

                for (unsigned i = 0; i < n; i++)
                        if (list[i] == (Mechanism) m)
                                return config_error(error, -EINVAL, "%s:%u: %s=: duplicate mechanism '%s'",
                                                    path, line, key, w);

                /* Without duplicates there can be no more than
                 * _MECHANISM_MAX entries. */
                list[n++] = (Mechanism) m;
        }

        if (n == 0)
                return config_error(error, -EINVAL,
                                    "%s:%u: %s=: empty list (expected one or more of %s)",
                                    path, line, key, mechanism_names());

        /* A later assignment replaces the whole list: order is preference,
         * and appending would make that unpredictable across drop-ins. */
        memcpy(c->mechanisms, list, n * sizeof(list[0]));
        c->n_mechanisms = n;
        return 0;
}

static int parse_assignment(const char *path, unsigned line, const char *key, char *value,
                            BgrunConfig *c, char **error) {
        if (streq(key, "ContainmentMode")) {
                int m;

                /* No systemd-style "empty resets": Mechanisms= cannot be
                 * empty, and one rule for both keys is easier to explain. */
                if (!*value)
                        return config_error(error, -EINVAL,
                                            "%s:%u: %s=: empty value (expected enforcing or report-only)",
                                            path, line, key);

                m = containment_mode_from_string(value);
                if (m < 0)
                        return config_error(error, -EINVAL,
                                            "%s:%u: %s=: invalid value '%s' (expected enforcing or report-only)",
                                            path, line, key, value);
                c->mode = (ContainmentMode) m;
                return 0;
        }

        if (streq(key, "Mechanisms"))
                return parse_mechanisms(path, line, key, value, c, error);

        return config_error(error, -EINVAL, "%s:%u: %s=: unknown key in section [Runtime]", path, line, key);
}

typedef enum LimitKind {
        LIMIT_COUNT,    /* a number >= 1 */
        LIMIT_TASKS,    /* a number >= 1, or infinity */
        LIMIT_BYTES,    /* bytes with K, M, G, T (base 1024), or infinity */
        LIMIT_BYTES_0,  /* the same, 0 allowed */
        LIMIT_DURATION, /* a time span, or infinity */
        LIMIT_WEIGHT,   /* 1..10000, as systemd's CPUWeight= */
        LIMIT_RUNTIME,  /* a time span of at least 1 µs, or infinity (none) */
} LimitKind;

static const struct {
        const char *key;
        LimitKind kind;
        size_t offset;
} limit_table[] = {
        { "MaxRunningJobs", LIMIT_COUNT, offsetof(BgrunLimits, max_running_jobs) },
        { "MaxQueuedJobs", LIMIT_COUNT, offsetof(BgrunLimits, max_queued_jobs) },
        { "MaxRecords", LIMIT_COUNT, offsetof(BgrunLimits, max_records) },
        { "RetentionSec", LIMIT_DURATION, offsetof(BgrunLimits, retention_usec) },
        { "OutputMaxBytes", LIMIT_BYTES, offsetof(BgrunLimits, output_max_bytes) },
        { "OutputMaxBytesPerUser", LIMIT_BYTES, offsetof(BgrunLimits, output_max_bytes_per_user) },
        { "TasksMax", LIMIT_TASKS, offsetof(BgrunLimits, tasks_max) },
        { "MemoryMax", LIMIT_BYTES, offsetof(BgrunLimits, memory_max) },
        { "CPUWeight", LIMIT_WEIGHT, offsetof(BgrunLimits, cpu_weight) },
        { "KeepFree", LIMIT_BYTES_0, offsetof(BgrunLimits, keep_free) },
        { "DefaultMaxRuntimeSec", LIMIT_RUNTIME, offsetof(BgrunLimits, default_max_runtime_usec) },
        { "MaxRuntimeSec", LIMIT_RUNTIME, offsetof(BgrunLimits, max_runtime_usec) },
};

static const char *limit_expected(LimitKind k) {
        switch (k) {
        case LIMIT_COUNT: return "a number of at least 1";
        case LIMIT_TASKS: return "a number of at least 1, or infinity";
        case LIMIT_BYTES: return "bytes of at least 1, with K, M, G or T, or infinity";
        case LIMIT_BYTES_0: return "bytes, with K, M, G or T";
        case LIMIT_DURATION: return "a time span such as 7d or 12h, or infinity";
        case LIMIT_WEIGHT: return "a number from 1 to 10000";
        case LIMIT_RUNTIME: return "a time span such as 30min or 2h, or infinity";
        }
        return "?";
}

static int parse_limit(LimitKind kind, const char *value, uint64_t *ret) {
        uint64_t v;
        int r;
        switch (kind) {
        case LIMIT_COUNT:
        case LIMIT_WEIGHT:
                r = parse_uint64_strict(value, &v, NULL);
                if (r < 0)
                        return r;
                if (v == 0 || (kind == LIMIT_WEIGHT && v > 10000))
                        return -ERANGE;
                break;
        case LIMIT_TASKS:
                if (streq(value, "infinity"))
                        v = UINT64_MAX;
                else if ((r = parse_uint64_strict(value, &v, NULL)) < 0)
                        return r;
                if (v == 0)
                        return -ERANGE;
                break;
        case LIMIT_BYTES:
        case LIMIT_BYTES_0:
                r = parse_size_bytes(value, &v);
                if (r < 0)
                        return r;
                if (v == 0 && kind == LIMIT_BYTES)
                        return -ERANGE;
                if (v == UINT64_MAX && kind == LIMIT_BYTES_0)
                        return -ERANGE;
                break;
        case LIMIT_DURATION:
        case LIMIT_RUNTIME:
                if (streq(value, "infinity"))
                        v = UINT64_MAX;
                else if ((r = parse_duration_usec(value, &v)) < 0)
                        return r;
                if (v == 0 && kind == LIMIT_RUNTIME)
                        return -ERANGE; /* a job that may not run at all is no limit */
                break;
        default:
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int parse_limits_assignment(const char *path, unsigned line, const char *key, const char *value,
                                   BgrunConfig *c, char **error) {
        for (size_t i = 0; i < ELEMENTSOF(limit_table); i++) {
                if (!streq(key, limit_table[i].key))
                        continue;
                uint64_t v;
                if (parse_limit(limit_table[i].kind, value, &v) < 0)
                        return config_error(error, -EINVAL, "%s:%u: %s=: invalid value '%s' (expected %s)", path,
                                            line, key, value, limit_expected(limit_table[i].kind));
                *(uint64_t *) ((uint8_t *) &c->limits + limit_table[i].offset) = v;
                return 0;
        }
        return config_error(error, -EINVAL, "%s:%u: %s=: unknown key in section [Limits]", path, line, key);
}

typedef enum Section {
        SECTION_NONE,
        SECTION_RUNTIME,
        SECTION_LIMITS,
} Section;

static int parse_text(const char *path, char *text, BgrunConfig *c, char **error) {
        Section section = SECTION_NONE;
        unsigned line = 0;
        char *next = text;

        while (next) {
                char *l, *eq, *key, *value;
                int r;

                line++;
                l = next;
                next = strchr(l, '\n');
                if (next)
                        *next++ = '\0';

                l = strip(l);
                if (*l == '\0' || *l == '#' || *l == ';')
                        continue;

                if (*l == '[') {
                        size_t n = strlen(l);

                        if (l[n - 1] != ']')
                                return config_error(error, -EINVAL, "%s:%u: malformed section header '%s'",
                                                    path, line, l);
                        l[n - 1] = '\0';
                        if (streq(l + 1, "Runtime"))
                                section = SECTION_RUNTIME;
                        else if (streq(l + 1, "Limits"))
                                section = SECTION_LIMITS;
                        else
                                return config_error(error, -EINVAL,
                                                    "%s:%u: unknown section [%s] (expected [Runtime] or [Limits])",
                                                    path, line, l + 1);
                        continue;
                }

                eq = strchr(l, '=');
                if (!eq)
                        return config_error(error, -EINVAL, "%s:%u: %s: missing '=' (expected Key=Value)",
                                            path, line, l);

                *eq = '\0';
                key = strip(l);
                value = strip(eq + 1);

                if (*key == '\0')
                        return config_error(error, -EINVAL, "%s:%u: =%s: missing key", path, line, value);

                if (section == SECTION_NONE)
                        return config_error(error, -EINVAL,
                                            "%s:%u: %s=: assignment outside of a [Runtime] or [Limits] section",
                                            path, line, key);

                r = section == SECTION_RUNTIME ? parse_assignment(path, line, key, value, c, error)
                                               : parse_limits_assignment(path, line, key, value, c, error);
                if (r < 0)
                        return r;
        }

        return 0;
}

/* Config files live in /etc and are root's to arrange, so symlinks are
 * followed (unlike read_file_at()). A link to /dev/null masks a file, as it
 * does for systemd. Returns 0 with *ret == NULL for a missing or masked file. */
static int read_config_file(const char *path, char **ret, char **error) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        size_t len;
        struct stat st;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                if (errno == ENOENT) {
                        *ret = NULL;
                        return 0;
                }
                r = negative_errno();
                return config_error(error, r, "%s: cannot open: %s", path, strerror(-r));
        }

        if (fstat(fd, &st) < 0) {
                r = negative_errno();
                return config_error(error, r, "%s: cannot stat: %s", path, strerror(-r));
        }
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
                *ret = NULL;
                return 0;
        }

        r = read_full_fd(fd, CONFIG_FILE_MAX, &text, &len);
        if (r < 0)
                return config_error(error, r, "%s: cannot read: %s", path, strerror(-r));

        if (memchr(text, '\0', len))
                return config_error(error, -EINVAL, "%s: contains a NUL byte", path);

        *ret = TAKE_PTR(text);
        return 0;
}

static int load_file(const char *path, BgrunConfig *c, char **error) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_config_file(path, &text, error);
        if (r < 0 || !text)
                return r;

        return parse_text(path, text, c, error);
}

static int conf_filter(const struct dirent *de) {
        size_t n = strlen(de->d_name);

        /* Hidden files are editor and package-manager leftovers. */
        if (de->d_name[0] == '.')
                return 0;
        if (n <= strlen(".conf") || !streq(de->d_name + n - strlen(".conf"), ".conf"))
                return 0;
        return de->d_type == DT_REG || de->d_type == DT_LNK || de->d_type == DT_UNKNOWN;
}

static int strcmp_dirent(const struct dirent **a, const struct dirent **b) {
        /* Byte order, not the locale's: "lexical" must not depend on LANG. */
        return strcmp((*a)->d_name, (*b)->d_name);
}

static void free_dirents(struct dirent **l, int n) {
        for (int i = 0; i < n; i++)
                free(l[i]);
        free(l);
}

int config_parse_string(const char *label, const char *text, BgrunConfig *c, char **ret_error) {
        _cleanup_free_ char *copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        return parse_text(label, copy, c, ret_error);
}

int config_load(const char *main_path, const char *dropin_dir, BgrunConfig *ret, char **ret_error) {
        _cleanup_free_ char *error = NULL;
        BgrunConfig c;
        int r;

        if (!ret)
                return -EINVAL;

        config_init(&c);

        if (main_path) {
                r = load_file(main_path, &c, &error);
                if (r < 0)
                        goto fail;
        }

        if (dropin_dir) {
                struct dirent **list = NULL;
                int n;

                n = scandir(dropin_dir, &list, conf_filter, strcmp_dirent);
                if (n < 0) {
                        r = negative_errno();
                        if (r != -ENOENT) {
                                r = config_error(&error, r, "%s: cannot list directory: %s",
                                                 dropin_dir, strerror(-r));
                                goto fail;
                        }
                        n = 0;
                }

                r = 0;
                for (int i = 0; i < n && r >= 0; i++) {
                        _cleanup_free_ char *path = NULL;

                        if (asprintf(&path, "%s/%s", dropin_dir, list[i]->d_name) < 0)
                                r = -ENOMEM;
                        else
                                r = load_file(path, &c, &error);
                }
                free_dirents(list, n);
                if (r < 0)
                        goto fail;
        }

        r = config_check(&c, &error);
        if (r < 0)
                goto fail;
        *ret = c;
        return 0;

fail:
        if (ret_error && error)
                *ret_error = TAKE_PTR(error);
        return r;
}

int config_check(const BgrunConfig *c, char **ret_error) {
        const BgrunLimits *l = &c->limits;
        if (l->default_max_runtime_usec == UINT64_MAX || l->default_max_runtime_usec <= l->max_runtime_usec)
                return 0;
        char d[FORMAT_DURATION_MAX], m[FORMAT_DURATION_MAX];
        format_duration(d, sizeof d, l->default_max_runtime_usec);
        format_duration(m, sizeof m, l->max_runtime_usec);
        return config_error(ret_error, -EINVAL,
                            "[Limits] DefaultMaxRuntimeSec=%s is above MaxRuntimeSec=%s: the default must be within the maximum",
                            d, m);
}

static int format_limit(LimitKind kind, uint64_t v, char *buf, size_t len) {
        if (v == UINT64_MAX && kind != LIMIT_COUNT && kind != LIMIT_WEIGHT)
                return snprintf(buf, len, "infinity");
        if (kind == LIMIT_DURATION || kind == LIMIT_RUNTIME) {
                format_duration(buf, len, v);
                return 0;
        }
        return snprintf(buf, len, "%" PRIu64, v);
}

int config_format(const BgrunConfig *c, char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "[Runtime]\nContainmentMode=%s\nMechanisms=", containment_mode_to_string(c->mode));
        for (unsigned i = 0; i < c->n_mechanisms; i++)
                fprintf(f, "%s%s", i ? " " : "", mechanism_to_string(c->mechanisms[i]));
        fputs("\n\n[Limits]\n", f);
        for (size_t i = 0; i < ELEMENTSOF(limit_table); i++) {
                char v[FORMAT_DURATION_MAX];
                format_limit(limit_table[i].kind,
                             *(const uint64_t *) ((const uint8_t *) &c->limits + limit_table[i].offset), v, sizeof v);
                fprintf(f, "%s=%s\n", limit_table[i].key, v);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}
