/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "macro.h"

static char tmpdir[] = "/tmp/test-config.XXXXXX";
static char *main_path, *dropin_dir;

/* asprintf() that cannot fail quietly; tests free what they keep. */
_printf_(1, 2)
static char *fmt(const char *format, ...) {
        va_list ap;
        char *s;
        int r;

        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        cr_assert_geq(r, 0);
        return s;
}

static void setup(void) {
        cr_assert_not_null(mkdtemp(tmpdir));
        main_path = fmt("%s/bgrund.conf", tmpdir);
        dropin_dir = fmt("%s/bgrund.conf.d", tmpdir);
}

static void teardown(void) {
        (void) rm_rf_at(AT_FDCWD, tmpdir);
        free(main_path);
        free(dropin_dir);
}

TestSuite(config, .init = setup, .fini = teardown);

static void put(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        cr_assert_not_null(f, "cannot create %s", path);
        cr_assert_eq(fputs(text, f) >= 0, true);
        cr_assert_eq(fclose(f), 0);
}

static void put_dropin(const char *name, const char *text) {
        char *path = fmt("%s/%s", dropin_dir, name);

        (void) mkdir(dropin_dir, 0755);
        put(path, text);
        free(path);
}

/* A sentinel that config_load() must leave alone on failure. */
static BgrunConfig poisoned(void) {
        return (BgrunConfig) { .mode = (ContainmentMode) 99, .n_mechanisms = 99 };
}

static void assert_defaults(const BgrunConfig *c) {
        cr_assert_eq(c->mode, CONTAINMENT_ENFORCING);
        cr_assert_eq(c->n_mechanisms, 3);
        cr_assert_eq(c->mechanisms[0], MECHANISM_SYSTEMD);
        cr_assert_eq(c->mechanisms[1], MECHANISM_CGROUPFS);
        cr_assert_eq(c->mechanisms[2], MECHANISM_PROCESS_GROUP);
}

Test(config, defaults) {
        BgrunConfig c = poisoned();

        config_init(&c);
        assert_defaults(&c);
}

Test(config, limits_default_to_the_contract_and_parse_each_kind) {
        BgrunConfig c = poisoned();
        cr_assert_eq(config_load("/nonexistent/bgrund.conf", NULL, &c, NULL), 0);
        cr_assert_eq(c.limits.max_running_jobs, 512);
        cr_assert_eq(c.limits.max_queued_jobs, 1000);
        cr_assert_eq(c.limits.max_records, 10000);
        cr_assert_eq(c.limits.retention_usec, 7ULL * 24 * 3600 * 1000000);
        cr_assert_eq(c.limits.output_max_bytes, 256ULL << 20);
        cr_assert_eq(c.limits.output_max_bytes_per_user, 4ULL << 30);
        cr_assert_eq(c.limits.tasks_max, 4096);
        cr_assert_eq(c.limits.memory_max, UINT64_MAX);
        cr_assert_eq(c.limits.cpu_weight, 100);
        cr_assert_eq(c.limits.keep_free, 512ULL << 20);

        put(main_path, "[Limits]\nMaxRunningJobs=3\nMaxQueuedJobs=20\nRetentionSec=1h 30min\nOutputMaxBytes=1M\n"
                       "TasksMax=infinity\nMemoryMax=2G\nCPUWeight=10000\nKeepFree=0\n"
                       "[Runtime]\nContainmentMode=report-only\n");
        cr_assert_eq(config_load(main_path, NULL, &c, NULL), 0);
        cr_assert_eq(c.limits.max_running_jobs, 3);
        cr_assert_eq(c.limits.max_queued_jobs, 20);
        cr_assert_eq(c.limits.retention_usec, 5400ULL * 1000000);
        cr_assert_eq(c.limits.output_max_bytes, 1ULL << 20);
        cr_assert_eq(c.limits.tasks_max, UINT64_MAX);
        cr_assert_eq(c.limits.memory_max, 2ULL << 30);
        cr_assert_eq(c.limits.cpu_weight, 10000);
        cr_assert_eq(c.limits.keep_free, 0);
        cr_assert_eq(c.limits.max_records, 10000, "keys not set keep their default");
        cr_assert_eq(c.mode, CONTAINMENT_REPORT_ONLY);
}

Test(config, formatted_configuration_loads_back_the_same) {
        BgrunConfig c = poisoned(), d = poisoned();
        put(main_path, "[Runtime]\nContainmentMode=report-only\nMechanisms=process_group\n"
                       "[Limits]\nRetentionSec=90min\nMemoryMax=infinity\nOutputMaxBytes=3K\n");
        cr_assert_eq(config_load(main_path, NULL, &c, NULL), 0);
        char *text = NULL;
        cr_assert_eq(config_format(&c, &text), 0);
        cr_assert_not_null(strstr(text, "MemoryMax=infinity\n"));
        cr_assert_not_null(strstr(text, "OutputMaxBytes=3072\n"));
        put(main_path, text);
        free(text);
        cr_assert_eq(config_load(main_path, NULL, &d, NULL), 0);
        cr_assert_eq(memcmp(&c.limits, &d.limits, sizeof c.limits), 0);
        cr_assert_eq(d.mode, c.mode);
        cr_assert_eq(d.n_mechanisms, 1);
        cr_assert_eq(d.mechanisms[0], MECHANISM_PROCESS_GROUP);
}

Test(config, strings) {
        cr_assert_str_eq(containment_mode_to_string(CONTAINMENT_ENFORCING), "enforcing");
        cr_assert_str_eq(containment_mode_to_string(CONTAINMENT_REPORT_ONLY), "report-only");
        cr_assert_null(containment_mode_to_string((ContainmentMode) 7));
        cr_assert_eq(containment_mode_from_string("report-only"), CONTAINMENT_REPORT_ONLY);
        cr_assert_eq(containment_mode_from_string("enforcing"), CONTAINMENT_ENFORCING);
        cr_assert_eq(containment_mode_from_string("Enforcing"), -EINVAL);
        cr_assert_eq(containment_mode_from_string(NULL), -EINVAL);

        cr_assert_str_eq(mechanism_to_string(MECHANISM_SYSTEMD), "systemd");
        cr_assert_str_eq(mechanism_to_string(MECHANISM_PROCESS_GROUP), "process_group");
        cr_assert_null(mechanism_to_string(_MECHANISM_MAX));
        cr_assert_eq(mechanism_from_string("process_group"), MECHANISM_PROCESS_GROUP);
        cr_assert_eq(mechanism_from_string("process-group"), -EINVAL);
        cr_assert_eq(mechanism_from_string(""), -EINVAL);
}

Test(config, missing_files_give_defaults) {
        BgrunConfig c = poisoned();
        char *error = NULL;

        cr_assert_eq(config_load(main_path, dropin_dir, &c, &error), 0);
        assert_defaults(&c);
        cr_assert_null(error);

        c = poisoned();
        cr_assert_eq(config_load(NULL, NULL, &c, NULL), 0);
        assert_defaults(&c);
}

Test(config, main_file) {
        BgrunConfig c = poisoned();
        char *error = NULL;

        put(main_path,
            "# bgrund configuration\n"
            "; another comment style\n"
            "\n"
            "   \n"
            "[Runtime]\n"
            "  ContainmentMode =   report-only  \n"
            "Mechanisms=process_group\t systemd\r\n");

        cr_assert_eq(config_load(main_path, dropin_dir, &c, &error), 0, "error: %s", error);
        cr_assert_eq(c.mode, CONTAINMENT_REPORT_ONLY);
        cr_assert_eq(c.n_mechanisms, 2);
        cr_assert_eq(c.mechanisms[0], MECHANISM_PROCESS_GROUP);
        cr_assert_eq(c.mechanisms[1], MECHANISM_SYSTEMD);
        cr_assert_null(error);
}

Test(config, later_assignment_replaces_list) {
        BgrunConfig c = poisoned();

        put(main_path,
            "[Runtime]\n"
            "Mechanisms=systemd process_group\n"
            "Mechanisms=process_group\n"
            "[Runtime]\n"
            "ContainmentMode=report-only\n");

        cr_assert_eq(config_load(main_path, NULL, &c, NULL), 0);
        cr_assert_eq(c.mode, CONTAINMENT_REPORT_ONLY);
        cr_assert_eq(c.n_mechanisms, 1);
        cr_assert_eq(c.mechanisms[0], MECHANISM_PROCESS_GROUP);
}

Test(config, dropins_override_in_lexical_order) {
        BgrunConfig c = poisoned();
        char *error = NULL, *path;

        put(main_path,
            "[Runtime]\n"
            "ContainmentMode=enforcing\n"
            "Mechanisms=systemd\n");
        /* Written out of order so readdir() order cannot pass for sorting. */
        put_dropin("30-c.conf", "[Runtime]\nContainmentMode=report-only\n");
        put_dropin("10-a.conf", "[Runtime]\nContainmentMode=enforcing\nMechanisms=systemd\n");
        put_dropin("20-b.conf", "[Runtime]\nMechanisms=process_group systemd\n");
        /* Not drop-ins: wrong suffix, hidden, a directory. */
        put_dropin("99-z.conf.bak", "garbage\n");
        put_dropin("99-z.txt", "garbage\n");
        put_dropin(".99-hidden.conf", "garbage\n");
        path = fmt("%s/99-dir.conf", dropin_dir);
        cr_assert_eq(mkdir(path, 0755), 0);
        free(path);

        cr_assert_eq(config_load(main_path, dropin_dir, &c, &error), 0, "error: %s", error);
        cr_assert_eq(c.mode, CONTAINMENT_REPORT_ONLY);
        cr_assert_eq(c.n_mechanisms, 2);
        cr_assert_eq(c.mechanisms[0], MECHANISM_PROCESS_GROUP);
        cr_assert_eq(c.mechanisms[1], MECHANISM_SYSTEMD);
}

Test(config, dropin_order_is_lexical_not_numeric) {
        BgrunConfig c = poisoned();

        /* "10.conf" sorts before "2.conf", so 2.conf has the last word. */
        put_dropin("2.conf", "[Runtime]\nContainmentMode=report-only\n");
        put_dropin("10.conf", "[Runtime]\nContainmentMode=enforcing\n");

        cr_assert_eq(config_load(main_path, dropin_dir, &c, NULL), 0);
        cr_assert_eq(c.mode, CONTAINMENT_REPORT_ONLY);
}

Test(config, dropin_symlinks) {
        BgrunConfig c = poisoned();
        char *target = fmt("%s/shared.conf", tmpdir), *link;

        put(target, "[Runtime]\nContainmentMode=report-only\n");
        put_dropin("10-real.conf", "[Runtime]\nMechanisms=process_group\n");

        link = fmt("%s/20-linked.conf", dropin_dir);
        cr_assert_eq(symlink(target, link), 0);
        free(link);
        /* A link to /dev/null masks a drop-in. */
        link = fmt("%s/30-masked.conf", dropin_dir);
        cr_assert_eq(symlink("/dev/null", link), 0);
        free(link);
        free(target);

        cr_assert_eq(config_load(main_path, dropin_dir, &c, NULL), 0);
        cr_assert_eq(c.mode, CONTAINMENT_REPORT_ONLY);
        cr_assert_eq(c.n_mechanisms, 1);
        cr_assert_eq(c.mechanisms[0], MECHANISM_PROCESS_GROUP);
}

static const struct {
        const char *text;
        const char *message; /* after the file name */
} errors[] = {
        { "[Runtime]\nContainmentMode=strict\n",
          ":2: ContainmentMode=: invalid value 'strict' (expected enforcing or report-only)" },
        { "[Runtime]\n\n# comment\nContainmentMode = Enforcing \n",
          ":4: ContainmentMode=: invalid value 'Enforcing' (expected enforcing or report-only)" },
        { "[Runtime]\nContainmentMode=\n",
          ":2: ContainmentMode=: empty value (expected enforcing or report-only)" },
        { "[Runtime]\n# c\nFoo=bar\n",
          ":3: Foo=: unknown key in section [Runtime]" },
        { "ContainmentMode=enforcing\n",
          ":1: ContainmentMode=: assignment outside of a [Runtime] or [Limits] section" },
        { "# header\n[Other]\nContainmentMode=enforcing\n",
          ":2: unknown section [Other] (expected [Runtime] or [Limits])" },
        { "[Runtime]\n[runtime]\n",
          ":2: unknown section [runtime] (expected [Runtime] or [Limits])" },
        { "[Runtime\n",
          ":1: malformed section header '[Runtime'" },
        { "[Runtime]\nContainmentMode enforcing\n",
          ":2: ContainmentMode enforcing: missing '=' (expected Key=Value)" },
        { "[Runtime]\n=enforcing\n",
          ":2: =enforcing: missing key" },
        { "[Runtime]\nMechanisms=\n",
          ":2: Mechanisms=: empty list (expected one or more of systemd, cgroupfs or process_group)" },
        { "[Runtime]\nMechanisms=   \t \n",
          ":2: Mechanisms=: empty list (expected one or more of systemd, cgroupfs or process_group)" },
        { "[Runtime]\nMechanisms=systemd cgroup\n",
          ":2: Mechanisms=: invalid value 'cgroup' (expected systemd, cgroupfs or process_group)" },
        { "[Runtime]\nMechanisms=systemd process_group systemd\n",
          ":2: Mechanisms=: duplicate mechanism 'systemd'" },
        { "[Limits]\nMaxRunningJobs=0\n",
          ":2: MaxRunningJobs=: invalid value '0' (expected a number of at least 1)" },
        { "[Limits]\nOutputMaxBytes=lots\n",
          ":2: OutputMaxBytes=: invalid value 'lots' (expected bytes of at least 1, with K, M, G or T, or infinity)" },
        { "[Limits]\nCPUWeight=10001\n",
          ":2: CPUWeight=: invalid value '10001' (expected a number from 1 to 10000)" },
        { "[Limits]\nRetentionSec=7 fortnights\n",
          ":2: RetentionSec=: invalid value '7 fortnights' (expected a time span such as 7d or 12h, or infinity)" },
        { "[Limits]\nKeepFree=infinity\n",
          ":2: KeepFree=: invalid value 'infinity' (expected bytes, with K, M, G or T)" },
        { "[Limits]\nContainmentMode=enforcing\n",
          ":2: ContainmentMode=: unknown key in section [Limits]" },
};

Test(config, errors_name_file_line_and_key) {
        for (size_t i = 0; i < ELEMENTSOF(errors); i++) {
                BgrunConfig c = poisoned();
                char *error = NULL, *expected = fmt("%s%s", main_path, errors[i].message);

                put(main_path, errors[i].text);

                cr_assert_eq(config_load(main_path, NULL, &c, &error), -EINVAL, "case %zu", i);
                cr_assert_not_null(error, "case %zu: no message", i);
                cr_assert_str_eq(error, expected);
                cr_assert_eq(c.n_mechanisms, 99, "case %zu: ret written on failure", i);
                free(error);
                free(expected);
        }
}

Test(config, error_in_dropin_names_dropin) {
        BgrunConfig c = poisoned();
        char *error = NULL, *expected;

        put(main_path, "[Runtime]\nContainmentMode=report-only\n");
        put_dropin("10-ok.conf", "[Runtime]\nMechanisms=systemd\n");
        put_dropin("20-bad.conf", "[Runtime]\n\nMechanisms=systemd\nBogus=1\n");

        cr_assert_eq(config_load(main_path, dropin_dir, &c, &error), -EINVAL);
        expected = fmt("%s/20-bad.conf:4: Bogus=: unknown key in section [Runtime]", dropin_dir);
        cr_assert_str_eq(error, expected);
        cr_assert_eq(c.n_mechanisms, 99);
        free(error);
        free(expected);

        /* The error pointer is optional. */
        cr_assert_eq(config_load(main_path, dropin_dir, &c, NULL), -EINVAL);
}

Test(config, main_path_is_directory) {
        BgrunConfig c = poisoned();
        char *error = NULL, *expected = fmt("%s: cannot read: %s", main_path, strerror(EISDIR));

        cr_assert_eq(mkdir(main_path, 0755), 0);
        cr_assert_eq(config_load(main_path, NULL, &c, &error), -EISDIR);
        cr_assert_str_eq(error, expected);
        free(error);
        free(expected);
}

/* Runs config_load() in a child as an unprivileged user (root reads anything,
 * so EACCES cannot be had otherwise). Returns the result; *message gets the
 * error text. The answer travels through a pipe, not the exit status, which
 * valgrind may overwrite in the child. */
static int load_unprivileged(const char *m, const char *d, char *message, size_t size) {
        char buf[4096];
        int p[2], r = 0, consumed = 0;
        ssize_t n;
        pid_t pid;

        cr_assert_eq(pipe(p), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                BgrunConfig c;
                char *error = NULL;

                close(p[0]);
                if (geteuid() == 0 &&
                    (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)) {
                        (void) !write(p[1], "skip", 4);
                        _exit(0);
                }
                r = config_load(m, d, &c, &error);
                dprintf(p[1], "%d %s", r, error ?: "");
                free(error);
                _exit(0);
        }

        close(p[1]);
        n = read(p[0], buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(p[0]);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);

        if (streq(buf, "skip"))
                cr_skip_test("cannot drop privileges here");
        cr_assert_eq(sscanf(buf, "%d %n", &r, &consumed), 1, "child said \"%s\"", buf);
        snprintf(message, size, "%s", buf + consumed);
        return r;
}

Test(config, unreadable_file_is_an_error) {
        char message[4096], *expected = fmt("%s: cannot open: %s", main_path, strerror(EACCES));

        cr_assert_eq(chmod(tmpdir, 0755), 0);
        put(main_path, "[Runtime]\nContainmentMode=report-only\n");
        cr_assert_eq(chmod(main_path, 0000), 0);

        cr_assert_eq(load_unprivileged(main_path, NULL, message, sizeof(message)), -EACCES);
        cr_assert_str_eq(message, expected);
        free(expected);
}

Test(config, unreadable_dropin_dir_is_an_error) {
        char message[4096], *expected = fmt("%s: cannot list directory: %s", dropin_dir, strerror(EACCES));

        cr_assert_eq(chmod(tmpdir, 0755), 0);
        put_dropin("10.conf", "[Runtime]\n");
        cr_assert_eq(chmod(dropin_dir, 0000), 0);

        cr_assert_eq(load_unprivileged(NULL, dropin_dir, message, sizeof(message)), -EACCES);
        cr_assert_str_eq(message, expected);
        free(expected);

        /* So that teardown can remove it. */
        cr_assert_eq(chmod(dropin_dir, 0755), 0);
}

/* DefaultMaxRuntimeSec= and MaxRuntimeSec=: none by default, a time span or
 * infinity, never 0; a default above the maximum names both, even when they
 * come from different files. */
Test(config, runtime_limits) {
        BgrunConfig c = poisoned();
        cr_assert_eq(config_load("/nonexistent/bgrund.conf", NULL, &c, NULL), 0);
        cr_assert_eq(c.limits.default_max_runtime_usec, UINT64_MAX);
        cr_assert_eq(c.limits.max_runtime_usec, UINT64_MAX);

        put(main_path, "[Limits]\nDefaultMaxRuntimeSec=2\nMaxRuntimeSec=1h\n");
        cr_assert_eq(config_load(main_path, NULL, &c, NULL), 0);
        cr_assert_eq(c.limits.default_max_runtime_usec, 2ULL * 1000000);
        cr_assert_eq(c.limits.max_runtime_usec, 3600ULL * 1000000);

        char *error = NULL;
        put(main_path, "[Limits]\nMaxRuntimeSec=0\n");
        cr_assert_eq(config_load(main_path, NULL, &c, &error), -EINVAL);
        cr_assert(strstr(error, "MaxRuntimeSec=: invalid value '0'"), "%s", error);
        free(error);
        error = NULL;

        put(main_path, "[Limits]\nDefaultMaxRuntimeSec=2h\n");
        put_dropin("50-max.conf", "[Limits]\nMaxRuntimeSec=30min\n");
        cr_assert_eq(config_load(main_path, dropin_dir, &c, &error), -EINVAL);
        cr_assert(strstr(error, "DefaultMaxRuntimeSec=2h is above MaxRuntimeSec=30min"), "%s", error);
        free(error);
}
