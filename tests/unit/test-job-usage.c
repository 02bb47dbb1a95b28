/* SPDX-License-Identifier: MIT */
/* The record's parts for job control: stdin, a terminal's size, the limits
 * as launched, which of them are unenforced, what the job used. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "job-record.h"
#include "job-usage.h"
#include "launch-options.h"
#include "macro.h"

static JobSpec base_spec(void) {
        static char *env[] = { NULL };
        JobSpec s = {
                .id = "abc0123456",
                .session_id = (char *) "s",
                .command = (char *) "true",
                .cwd = (char *) "/",
                .user = (char *) "root", .home = (char *) "/", .shell = (char *) "/bin/sh",
                .environment = env,
                .mechanism = MECHANISM_SYSTEMD,
                .unit = (char *) "bgrun-job-abc0123456.scope",
        };
        launch_options_defaults(&s);
        return s;
}

Test(job_usage, spec_keeps_input_terminal_and_limits) {
        JobSpec s = base_spec();
        s.stdin_mode = JOB_STDIN_TTY;
        s.tty_rows = 40;
        s.tty_columns = 132;
        s.memory_max = 1 << 30;
        s.cpu_quota_per_sec_usec = 500000;
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        cr_assert_not_null(strstr(json, "\"stdin\":\"tty\""));
        cr_assert_null(strstr(json, "tasks_max"), "a limit not set is not written");
        JobSpec t = {};
        cr_assert_eq(job_spec_from_json(json, &t), 0);
        cr_assert_eq(t.stdin_mode, JOB_STDIN_TTY);
        cr_assert_eq(t.tty_rows, 40);
        cr_assert_eq(t.tty_columns, 132);
        cr_assert_eq(t.memory_max, 1 << 30);
        cr_assert_eq(t.tasks_max, 0);
        cr_assert_eq(t.cpu_quota_per_sec_usec, 500000);
        job_spec_done(&t);
}

/* A spec from before input existed has no "stdin", and neither has one
 * written now for /dev/null (an option is written only when it is not its
 * default): both read as /dev/null, with the default size. */
Test(job_usage, a_spec_from_before_has_no_input_and_the_default_size) {
        JobSpec s = base_spec();
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        cr_assert_null(strstr(json, "\"stdin\""), "%s", json);
        cr_assert_null(strstr(json, "\"tty_rows\""), "%s", json);
        JobSpec t = {};
        cr_assert_eq(job_spec_from_json(json, &t), 0);
        cr_assert_eq(t.stdin_mode, JOB_STDIN_NULL);
        cr_assert_eq(t.tty_rows, launch_options[LAUNCH_OPTION_TTY_ROWS].default_value);
        job_spec_done(&t);
}

Test(job_usage, a_bad_stdin_is_refused) {
        JobSpec s = base_spec();
        s.stdin_mode = JOB_STDIN_PIPE;
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        char *p = strstr(json, "\"stdin\":\"pipe\"");
        cr_assert_not_null(p);
        memcpy(p, "\"stdin\":\"pip!\"", strlen("\"stdin\":\"pip!\""));
        JobSpec t = {};
        cr_assert_eq(job_spec_from_json(json, &t), -EBADMSG);
}

Test(job_usage, run_keeps_the_unenforced_limits) {
        JobRun r = { .pid = 1, .supervisor_pid = 2, .cgroup = (char *) "/x/payload",
                     .limits_unenforced = 1U << JOB_LIMIT_MEMORY_MAX | 1U << JOB_LIMIT_CPU_QUOTA };
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_run_to_json(&r, &json), 0);
        cr_assert_not_null(strstr(json, "\"limits_unenforced\":[\"MemoryMax\",\"CPUQuotaPerSecUSec\"]"), "%s", json);
        JobRun t = {};
        cr_assert_eq(job_run_from_json(json, &t), 0);
        cr_assert_eq(t.limits_unenforced, r.limits_unenforced);
        job_run_done(&t);
        char *p = strstr(json, "MemoryMax");
        memcpy(p, "MemoryMix", 9);
        cr_assert_eq(job_run_from_json(json, &t), -EBADMSG, "an unknown limit's name");
}

Test(job_usage, result_keeps_only_what_was_measured) {
        JobResult r = { .status = JOB_EXITED, .method = TEARDOWN_CGROUP_KILL, .cpu_usage_known = true, .cpu_usage_usec = 1234 };
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_result_to_json(&r, &json), 0);
        cr_assert_null(strstr(json, "memory_peak"), "not measured, not written: %s", json);
        JobResult t = {};
        cr_assert_eq(job_result_from_json(json, &t), 0);
        cr_assert(t.cpu_usage_known);
        cr_assert_eq(t.cpu_usage_usec, 1234);
        cr_assert_not(t.memory_peak_known);
}

Test(job_usage, unenforced_limits_follow_the_controllers) {
        JobSpec s = base_spec();
        cr_assert_eq(job_limits_unenforced(&s, NULL), 0, "no limit, nothing unenforced");
        s.memory_max = 1;
        s.tasks_max = 2;
        s.cpu_quota_per_sec_usec = 3;
        cr_assert_eq(job_limits_unenforced(&s, NULL), 7, "no cgroup: all of them");
        cr_assert_eq(job_limits_unenforced(&s, ""), 7, "no controllers: all of them");
        cr_assert_eq(job_limits_unenforced(&s, "cpu memory pids"), 0);
        cr_assert_eq(job_limits_unenforced(&s, "cpuset cpu io"), 1U << JOB_LIMIT_MEMORY_MAX | 1U << JOB_LIMIT_TASKS_MAX,
                     "cpuset is not memory, cpu is cpu");
}

Test(job_usage, cgroup_files_are_read_exactly) {
        char dir[] = "/tmp/bgrun-test-usage-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        FILE *f = fopen(strcat(strcpy((char[256]) {}, dir), "/cpu.stat"), "w");
        fprintf(f, "usage_usec 987654\nuser_usec 900000\nsystem_usec 87654\n");
        fclose(f);
        JobUsage u;
        job_usage_read_cgroup(fd, &u);
        cr_assert(u.cpu_known);
        cr_assert_eq(u.cpu_usage_usec, 987654);
        cr_assert_not(u.memory_peak_known, "no memory.peak: unknown, not 0");
        f = fopen(strcat(strcpy((char[256]) {}, dir), "/memory.peak"), "w");
        fprintf(f, "4096\n");
        fclose(f);
        job_usage_read_cgroup(fd, &u);
        cr_assert(u.memory_peak_known);
        cr_assert_eq(u.memory_peak, 4096);
        close(fd);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        cr_assert_eq(system(cmd), 0);
}
