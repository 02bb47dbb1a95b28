/* SPDX-License-Identifier: MIT */
/* The job lifecycle driven directly, with no bus and no systemd: a trivial
 * test mechanism is all it takes to run a job, which shows what adding a
 * mechanism takes (one ContainmentOps and its slot). The real
 * bgrun-supervisor runs the command, so these tests need root (it drops
 * to the job's owner) and skip without it. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containment.h"
#include "launch-options.h"
#include "fileio.h"
#include "grant.h"
#include "job-input.h"
#include "job-live.h"
#include "job-queue.h"
#include "job-store.h"
#include "job-teardown.h"
#include "macro.h"
#include "pidref.h"
#include "process-tree.h"
#include "runtime.h"
#include "supervisor-protocol.h"
#include "time-util.h"

/* --- a trivial mechanism: nothing around the supervisor ----------------- */

static struct {
        unsigned starts, verifies, kills, failing_starts, cleanups;
        bool ready_async;
        char started_id[JOB_ID_MAX];
        /* What describe() names a job's cgroup under, as configured now. */
        const char *cgroup_base;
        char cleaned_cgroup[128];
        /* The supervisor find_supervisor() finds in its containment, and
         * the cgroup that has to name it. */
        pid_t contained_supervisor;
        char supervisor_cgroup[128];
} calls;

static bool test_available(Containment *c) {
        return true;
}

static int test_describe(Containment *c, const JobSpec *spec, char **ret_unit, char **ret_cgroup) {
        /* As cgroupfs's describe(), this reads what only init() sets up. */
        cr_assert(c->initialized, "describe() ran on a mechanism that was not initialized");
        if (asprintf(ret_unit, "test-%s", spec->id) < 0)
                return -ENOMEM;
        return asprintf(ret_cgroup, "%s/%s", calls.cgroup_base, spec->id) < 0 ? -ENOMEM : 0;
}

static int test_prepare(Containment *c, const ContainmentJob *j, SpawnPlan *ret) {
        *ret = SPAWN_PLAN_NULL;
        return 0;
}

/* The fixture's runtime, which a test may free and make anew. */
static Runtime *rt;

static int on_ready_later(sd_event_source *s, void *userdata) {
        /* Only for the runtime that started it: one freed since (a test
         * of a restart) is not read. */
        Job *j = userdata == rt ? runtime_find_job(rt, calls.started_id) : NULL;
        if (j && job_awaits_containment(j, MECHANISM_PROCESS_GROUP))
                job_containment_ready(j);
        sd_event_source_disable_unref(s);
        return 0;
}

static int test_start(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        calls.starts++;
        if (!calls.ready_async)
                return 1;
        /* Ready later, from the event loop, as systemd's JobRemoved is. */
        strcpy(calls.started_id, j->id);
        return sd_event_add_defer(c->host->event, NULL, on_ready_later, c->host->userdata);
}

static int test_start_fails(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        calls.failing_starts++;
        return -EIO;
}

static int test_verify(Containment *c, const ContainmentJob *j, pid_t supervisor) {
        calls.verifies++;
        Job *job = runtime_find_job(c->host->userdata, j->id);
        return pidref_check(&(PidRef) { .pid = supervisor, .fd = job->live->start.spawned_pidfd }) == PIDREF_OWNED;
}

static int test_kill(Containment *c, const char *job_id, const char *cgroup, const JobRun *run, int *ret_handle) {
        calls.kills++;
        *ret_handle = -EBADF;
        PidRef leader = PIDREF_NULL;
        if (run && pidref_verify(run->pid, run->start_token, &leader) == PIDREF_OWNED) {
                (void) pidref_kill(&leader, SIGKILL);
                pidref_done(&leader);
        }
        return 0;
}

static int test_is_empty(Containment *c, const JobRun *run, int handle) {
        return run ? !process_group_has_members(run->pid) : -ENODATA;
}

static int test_watch(Containment *c, int handle, int *ret_fd) {
        return -EOPNOTSUPP;
}

static int test_list(Containment *c, char ***ret_ids, char ***ret_cgroups) {
        *ret_ids = calloc(1, sizeof(char *));
        *ret_cgroups = calloc(1, sizeof(char *));
        return *ret_ids && *ret_cgroups ? 0 : -ENOMEM;
}

static int test_kill_orphan(Containment *c, const char *cgroup) {
        return 0;
}

static int test_identify(Containment *c, const char *cgroup, char ret_id[static JOB_ID_MAX]) {
        return 0;
}

static int test_find_supervisor(Containment *c, const char *cgroup, PidRef *ret) {
        if (calls.contained_supervisor <= 0 || !streq(cgroup, calls.supervisor_cgroup))
                return 0;
        return pidref_set_pid(ret, calls.contained_supervisor) < 0 ? 0 : 1;
}

static void test_cleanup(Containment *c, const char *cgroup, bool released) {
        calls.cleanups++;
        snprintf(calls.cleaned_cgroup, sizeof calls.cleaned_cgroup, "%s", cgroup);
}

static const ContainmentOps test_ops = {
        /* The slot of a mechanism without a cgroup, so the supervisor runs
         * the command as it does for process_group. */
        .mechanism = MECHANISM_PROCESS_GROUP,
        .teardown_method = TEARDOWN_PROCESS_GROUP,
        .available = test_available,
        .describe = test_describe,
        .prepare = test_prepare,
        .start = test_start,
        .verify = test_verify,
        .kill = test_kill,
        .is_empty = test_is_empty,
        .watch = test_watch,
        .list = test_list,
        .kill_orphan = test_kill_orphan,
        .identify = test_identify,
        .find_supervisor = test_find_supervisor,
        .cleanup = test_cleanup,
};

/* The same, in the systemd slot, always failing to start. */
static ContainmentOps failing_ops;

/* --- what the lifecycle reports ----------------------------------------- */

static struct {
        unsigned new, running, ended, discarded, running_changed, input_ready;
        char discard_message[256];
        JobStatus ended_status;
} events;

static void on_new(void *u, Job *j) { events.new++; }
static void on_running(void *u, Job *j) { events.running++; }
static void on_ended(void *u, Job *j) {
        events.ended++;
        events.ended_status = j->status;
}
static void on_discarded(void *u, Job *j, int error, const char *message) {
        events.discarded++;
        snprintf(events.discard_message, sizeof events.discard_message, "%s", message);
}
static void on_running_changed(void *u) { events.running_changed++; }
static void on_input_ready(void *u, Job *j) { events.input_ready++; }

static const JobNotifier notifier = {
        .job_new = on_new,
        .job_running = on_running,
        .job_ended = on_ended,
        .job_discarded = on_discarded,
        .running_jobs_changed = on_running_changed,
        .input_ready = on_input_ready,
};

/* --- the fixture ------------------------------------------------------- */

static char state_dir[] = "/tmp/test-job-lifecycle.XXXXXX";
static sd_event *event;
/* A test's processes that must not outlive it, whatever it asserted. */
static PidRef leftovers[2] = { PIDREF_NULL, PIDREF_NULL };

static void new_runtime(void) {
        BgrunConfig config;
        config_init(&config);
        /* Only process_group is configured, so nothing talks to systemd;
         * report-only, since it does not contain. */
        config.mode = CONTAINMENT_REPORT_ONLY;
        config.mechanisms[0] = MECHANISM_PROCESS_GROUP;
        config.n_mechanisms = 1;
        cr_assert_eq(runtime_new(&rt, event, state_dir, &config, false), 0);
        rt->containments[MECHANISM_PROCESS_GROUP] =
                (Containment) { .ops = &test_ops, .host = &rt->containment_host, .initialized = true };
        runtime_set_notifier(rt, &notifier, NULL);
}

static void setup(void) {
        if (geteuid() != 0)
                cr_skip_test("needs root: the supervisor drops privileges to the job's owner");
        const char *supervisor = getenv("BGRUN_TEST_SUPERVISOR");
        cr_assert_not_null(supervisor, "BGRUN_TEST_SUPERVISOR names the built bgrun-supervisor");
        calls = (typeof(calls)) { .cgroup_base = "/test-then" };
        events = (typeof(events)) {};
        cr_assert_not_null(mkdtemp(state_dir));
        cr_assert_geq(sd_event_new(&event), 0);
        new_runtime();
        rt->supervisor_path = supervisor;
}

static void teardown(void) {
        /* A test that failed half-way leaves jobs running: end them. */
        JobTableIter it;
        for (Job *j = rt ? job_table_first(&rt->jobs, &it) : NULL; j; j = job_table_next(&rt->jobs, &it))
                if (!job_is_ended(j))
                        job_kill(j);
        for (uint64_t deadline = now_monotonic_usec() + 5 * USEC_PER_SEC; rt && rt->n_running > 0 && now_monotonic_usec() < deadline;)
                (void) sd_event_run(event, 100 * USEC_PER_MSEC);
        for (size_t i = 0; i < ELEMENTSOF(leftovers); i++) {
                if (leftovers[i].fd >= 0 && pidref_check(&leftovers[i]) == PIDREF_OWNED)
                        (void) pidref_kill(&leftovers[i], SIGKILL);
                pidref_done(&leftovers[i]);
        }
        rt = runtime_free(rt);
        event = sd_event_unref(event);
        _cleanup_close_ int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        (void) rm_rf_at(fd, state_dir + strlen("/tmp/"));
}

static void spec_for(JobSpec *spec, const char *command) {
        *spec = (JobSpec) {
                .session_id = strdup("s"),
                .command = strdup(command),
                .cwd = strdup("/"),
                .user = strdup("root"),
                .home = strdup("/root"),
                .shell = strdup("/bin/sh"),
                .groups = calloc(1, sizeof(gid_t)),
                .n_groups = 1,
        };
        launch_options_defaults(spec);
        cr_assert(spec->session_id && spec->command && spec->cwd && spec->user && spec->home && spec->shell &&
                  spec->groups);
}

/* Run the loop until cond holds or 10 s passed. */
#define RUN_UNTIL(cond)                                                          \
        do {                                                                     \
                uint64_t _deadline = now_monotonic_usec() + 10 * USEC_PER_SEC;   \
                while (!(cond) && now_monotonic_usec() < _deadline)              \
                        cr_assert_geq(sd_event_run(event, 100 * USEC_PER_MSEC), 0); \
                cr_assert(cond, "timed out waiting for: %s", #cond);             \
        } while (0)

static void launch(const char *command, char ret_id[static JOB_ID_MAX]) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, command);
        Job *j = NULL;
        int r = runtime_launch(rt, &spec, &j);
        cr_assert_eq(r, 0, "runtime_launch: %s", strerror(-r));
        cr_assert_not_null(j);
        cr_assert(job_is_starting(j), "%s", job_state_to_string(j->state));
        strcpy(ret_id, j->id);
}

TestSuite(job_lifecycle, .init = setup, .fini = teardown, .timeout = 60);

Test(job_lifecycle, a_job_runs_and_ends_through_a_test_mechanism) {
        char id[JOB_ID_MAX];
        calls.ready_async = true;
        launch("echo hello", id);
        RUN_UNTIL(events.ended == 1);

        cr_assert_eq(calls.starts, 1);
        cr_assert_eq(calls.verifies, 1, "the supervisor is verified before it is let go");
        cr_assert_eq(events.new, 1);
        cr_assert_eq(events.running, 1);
        cr_assert_eq(events.ended_status, JOB_EXITED);
        cr_assert_eq(rt->n_running, 0);

        /* The record names what the mechanism described, and is final. */
        Job *j = runtime_find_job(rt, id);
        cr_assert_not_null(j);
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        char unit[64];
        snprintf(unit, sizeof unit, "test-%s", id);
        cr_assert_str_eq(v.spec->unit, unit);
        cr_assert_eq(v.spec->mechanism, MECHANISM_PROCESS_GROUP);
        cr_assert_not_null(v.result);
        cr_assert_eq(v.result->exit_code, 0);
        cr_assert(v.result->dead);
        cr_assert_not(v.result->contained, "a mechanism without a cgroup never contains");
        cr_assert_eq(v.output_bytes, strlen("hello\n"));

        _cleanup_close_ int dir_fd = -EBADF;
        cr_assert_eq(job_store_open_job(rt->jobs_fd, id, &dir_fd), 0);
        Grant g = {};
        cr_assert_eq(grant_read(dir_fd, &g), 0);
        cr_assert_eq(g.state, GRANT_RELEASED);
        grant_done(&g);

        cr_assert_eq(job_forget(j), 0);
        cr_assert_null(runtime_find_job(rt, id));
}

Test(job_lifecycle, a_failing_mechanism_falls_back_to_the_next) {
        failing_ops = test_ops;
        failing_ops.mechanism = MECHANISM_SYSTEMD;
        failing_ops.start = test_start_fails;
        rt->containments[MECHANISM_SYSTEMD] = (Containment) { .ops = &failing_ops, .host = &rt->containment_host, .initialized = true };
        rt->config.mechanisms[0] = MECHANISM_SYSTEMD;
        rt->config.mechanisms[1] = MECHANISM_PROCESS_GROUP;
        rt->config.n_mechanisms = 2;

        char id[JOB_ID_MAX];
        launch("exit 3", id);
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(calls.failing_starts, 1);
        cr_assert_eq(calls.starts, 1);
        cr_assert_eq(events.ended_status, JOB_EXITED);

        JobView v;
        cr_assert_eq(job_view(runtime_find_job(rt, id), &v), 0);
        cr_assert_eq(v.spec->mechanism, MECHANISM_PROCESS_GROUP, "the spec follows the fallback");
        cr_assert_eq(v.result->exit_code, 3);
}

Test(job_lifecycle, no_mechanism_that_starts_means_nothing_is_left) {
        failing_ops = test_ops;
        failing_ops.start = test_start_fails;
        rt->containments[MECHANISM_PROCESS_GROUP] =
                (Containment) { .ops = &failing_ops, .host = &rt->containment_host, .initialized = true };

        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "true");
        Job *j = NULL;
        cr_assert_eq(runtime_launch(rt, &spec, &j), BGRUN_ERROR(START_FAILED));
        cr_assert_eq(job_table_size(&rt->jobs), 0);
        cr_assert_eq(rt->n_running, 0);
        cr_assert_eq(events.new + events.running + events.discarded, 0, "nobody heard of it");
        _cleanup_closedir_ DIR *d = fdopendir(dup(rt->jobs_fd));
        cr_assert_not_null(d);
        for (struct dirent *de; (de = readdir(d));)
                cr_assert(de->d_name[0] == '.', "a record was left behind: %s", de->d_name);
}

Test(job_lifecycle, a_lost_supervisor_is_released_through_the_mechanism) {
        char id[JOB_ID_MAX];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        cr_assert_eq(j->state, JOB_STATE_RUNNING);

        /* The supervisor dies without a result: bgrund must release the job
         * through its mechanism, and record it failed and confirmed dead. */
        cr_assert_eq(pidref_kill(&j->live->supervisor, SIGKILL), 0);
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(calls.kills, 1);
        cr_assert_eq(events.ended_status, JOB_FAILED);
        cr_assert_eq(rt->reaped.released, 1);

        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert(v.result->dead);
        cr_assert_eq(v.result->method, TEARDOWN_PROCESS_GROUP);
        cr_assert(v.result->executed);
}

Test(job_lifecycle, kill_ends_a_running_job_as_killed) {
        char id[JOB_ID_MAX];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        job_kill(j);
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(events.ended_status, JOB_KILLED);
        cr_assert_eq(calls.kills, 0, "the supervisor tore it down, not a release");
        cr_assert_eq(job_forget(j), 0);
}

/* A Kill moves the job to killing, and the counts follow its state alone
 * (job_set_state()): counted until nothing of it may be alive, RunningJobs
 * told once when it stops counting. */
Test(job_lifecycle, a_kill_moves_the_state_and_the_counts_follow_it) {
        char id[JOB_ID_MAX];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        cr_assert_eq(j->state, JOB_STATE_RUNNING, "%s", job_state_to_string(j->state));
        cr_assert_eq(rt->n_running, 1);
        cr_assert_eq(j->account->running, 1);
        unsigned changed = events.running_changed;
        job_kill(j);
        cr_assert_eq(j->state, JOB_STATE_KILLING, "%s", job_state_to_string(j->state));
        cr_assert_eq(j->live->request, JOB_REQUEST_KILL);
        cr_assert_eq(rt->n_running, 1, "counted until nothing of it may be alive");
        job_stop(j, SIGTERM, 0);
        cr_assert_eq(j->live->request, JOB_REQUEST_KILL, "a Stop after a Kill changes nothing");
        RUN_UNTIL(events.ended == 1);
        cr_assert(job_is_ended(j));
        cr_assert_eq(rt->n_running, 0);
        cr_assert_eq(j->account->running, 0);
        cr_assert_eq(events.running_changed, changed + 1, "RunningJobs told once");
        cr_assert_eq(job_forget(j), 0);
}

Test(job_lifecycle, every_state_has_a_name) {
        for (JobState s = 0; s < _JOB_STATE_MAX; s++)
                cr_assert_not_null(job_state_to_string(s), "state %d", s);
        cr_assert_null(job_state_to_string(_JOB_STATE_MAX));
}

/* --- job control (issue #12): a stop's signal and grace, input ---------- */

static Job *launch_spec(JobSpec *spec) {
        Job *j = NULL;
        int r = runtime_launch(rt, spec, &j);
        cr_assert_eq(r, 0, "runtime_launch: %s", strerror(-r));
        return j;
}

static void run_for(uint64_t usec) {
        uint64_t deadline = now_monotonic_usec() + usec;
        while (now_monotonic_usec() < deadline)
                cr_assert_geq(sd_event_run(event, 10 * USEC_PER_MSEC), 0);
}

Test(job_lifecycle, stop_sends_the_signal_and_a_trap_ends_the_job_within_its_grace) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "trap 'exit 7' TERM; while :; do sleep 0.05; done");
        spec.stop_signal = SIGTERM;
        spec.stop_grace_usec = 5 * USEC_PER_SEC;
        Job *j = launch_spec(&spec);
        char id[JOB_ID_MAX];
        strcpy(id, j->id);
        RUN_UNTIL(events.running == 1);
        run_for(200 * USEC_PER_MSEC); /* the trap is set */
        j = runtime_find_job(rt, id);
        job_stop(j, SIGTERM, 5 * USEC_PER_SEC);
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(events.ended_status, JOB_KILLED, "a Stop ends the job killed, whatever it exited with");
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert_eq(v.result->exit_code, 7, "the trap's exit");
        cr_assert_eq(v.result->method, TEARDOWN_SIGNAL);
        cr_assert(v.result->dead);
        cr_assert(v.result->cpu_usage_known, "the process tree's CPU time");
}

Test(job_lifecycle, stop_with_no_grace_kills_at_once) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "trap 'exit 7' TERM; while :; do sleep 0.05; done");
        Job *j = launch_spec(&spec);
        RUN_UNTIL(events.running == 1);
        run_for(200 * USEC_PER_MSEC);
        job_stop(j, SIGTERM, 0);
        RUN_UNTIL(events.ended == 1);
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert_eq(v.result->signal, SIGKILL);
        cr_assert_eq(v.result->method, TEARDOWN_PROCESS_TREE);
}

/* job_input_write(), waiting for the supervisor's answer to a new
 * connection as bgrund's face does: on the notification, never blocking. */
static int input_write(Job *j, const void *data, size_t size, bool close) {
        int r = job_input_write(j, data, size, close);
        if (r == -EAGAIN) {
                unsigned seen = events.input_ready;
                RUN_UNTIL(events.input_ready > seen);
                r = job_input_write(j, data, size, close);
        }
        return r;
}

Test(job_lifecycle, input_reaches_the_job_and_close_is_its_eof) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "read x; echo \"got $x\"; cat; echo end");
        spec.stdin_mode = JOB_STDIN_PIPE;
        Job *j = launch_spec(&spec);
        RUN_UNTIL(events.running == 1);
        cr_assert_eq(input_write(j, "hi\n", 3, false), 0);
        cr_assert_eq(input_write(j, "more\n", 5, true), 0);
        cr_assert_eq(input_write(j, "late\n", 5, false), -ENXIO, "closed: no input");
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(events.ended_status, JOB_EXITED);
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert_eq(v.output_bytes, strlen("got hi\nmore\nend\n"));
        cr_assert_eq(input_write(j, "x", 1, false), -ENXIO, "ended: no input");
}

Test(job_lifecycle, a_job_without_input_has_none) {
        char id[JOB_ID_MAX];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        cr_assert_eq(job_input_write(j, "x", 1, false), -ENXIO);
        cr_assert_eq(job_input_resize(j, 10, 10), -ENOTTY);
        job_kill(j);
        RUN_UNTIL(events.ended == 1);
}

Test(job_lifecycle, input_over_the_pipes_room_writes_nothing) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "exec sleep 100");
        spec.stdin_mode = JOB_STDIN_PIPE;
        Job *j = launch_spec(&spec);
        RUN_UNTIL(events.running == 1);
        static char chunk[64 * 1024];
        size_t written = 0;
        int r;
        while ((r = input_write(j, chunk, sizeof chunk, false)) == 0)
                written += sizeof chunk;
        cr_assert_eq(r, -ENOBUFS);
        cr_assert_leq(written, (size_t) SUPERVISOR_INPUT_PIPE_SIZE);
        /* What was refused left no part behind: exactly what was accepted
         * is queued. */
        int queued = 0;
        cr_assert_eq(ioctl(j->live->input_fd, FIONREAD, &queued), 0);
        cr_assert_eq((size_t) queued, written);
        job_kill(j);
        RUN_UNTIL(events.ended == 1);
}

/* A supervisor that does not answer holds nobody: the write says so at
 * once, and the notification comes when it answers. */
Test(job_lifecycle, input_never_waits_for_a_supervisor) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "read x; echo \"got $x\"");
        spec.stdin_mode = JOB_STDIN_PIPE;
        Job *j = launch_spec(&spec);
        RUN_UNTIL(events.running == 1);
        pid_t supervisor = j->live->supervisor.pid;
        cr_assert_eq(kill(supervisor, SIGSTOP), 0);
        /* A new connection, as after a restart of bgrund: not greeted yet. */
        job_input_disconnect(j->live);
        unsigned seen = events.input_ready;
        int first = job_input_write(j, "hi\n", 3, false);
        int second = job_input_write(j, "hi\n", 3, false);
        run_for(300 * USEC_PER_MSEC);
        unsigned seen_stopped = events.input_ready;
        /* Continued before anything is asserted: a failed assertion must
         * not leave a stopped supervisor behind. */
        cr_assert_eq(kill(supervisor, SIGCONT), 0);
        cr_assert_eq(first, -EAGAIN);
        cr_assert_eq(second, -EAGAIN, "still not answered: still not waited for");
        cr_assert_eq(seen_stopped, seen, "a stopped supervisor cannot have answered");
        RUN_UNTIL(events.input_ready == seen + 1);
        cr_assert_eq(job_input_write(j, "hi\n", 3, true), 0);
        RUN_UNTIL(events.ended == 1);
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert_eq(v.output_bytes, strlen("got hi\n"));
}

/* --- a configuration change, and records damaged while bgrund was away --- */

/* bgrund restarted with a configuration that no longer names the job's
 * mechanism: registered, so that its jobs can still end, not initialized. */
static void unconfigure_the_test_mechanism(void) {
        rt->containments[MECHANISM_PROCESS_GROUP].initialized = false;
}

Test(job_lifecycle, a_job_of_a_mechanism_no_longer_initialized_ends_and_is_cleaned_up) {
        char id[JOB_ID_MAX], cgroup[64];
        launch("sleep 0.5", id);
        RUN_UNTIL(events.running == 1);
        unconfigure_the_test_mechanism();
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(events.ended_status, JOB_EXITED);
        cr_assert_eq(calls.cleanups, 1, "the clean-up after a confirmed end ran");
        snprintf(cgroup, sizeof cgroup, "/test-then/%s", id);
        cr_assert_str_eq(calls.cleaned_cgroup, cgroup, "the clean-up takes the cgroup the grant names");
}

Test(job_lifecycle, a_lost_supervisor_of_a_mechanism_no_longer_initialized_is_released) {
        char id[JOB_ID_MAX], cgroup[64];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        unconfigure_the_test_mechanism();
        cr_assert_eq(pidref_kill(&j->live->supervisor, SIGKILL), 0);
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(calls.kills, 1, "kill() needs no init: the release went through the mechanism");
        cr_assert_eq(events.ended_status, JOB_FAILED);
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert(v.result->dead);
        snprintf(cgroup, sizeof cgroup, "/test-then/%s", id);
        cr_assert_str_eq(calls.cleaned_cgroup, cgroup);
}

Test(job_lifecycle, the_clean_up_takes_the_cgroup_the_grant_names_after_a_change) {
        char id[JOB_ID_MAX], cgroup[64];
        launch("sleep 0.5", id);
        RUN_UNTIL(events.running == 1);
        /* Jobs started from now on would get another cgroup. */
        calls.cgroup_base = "/test-now";
        RUN_UNTIL(events.ended == 1);
        snprintf(cgroup, sizeof cgroup, "/test-then/%s", id);
        cr_assert_eq(calls.cleanups, 1);
        cr_assert_str_eq(calls.cleaned_cgroup, cgroup, "not the cgroup a job would get now");
}

/* Put a copy of the file at from in dir_fd's name, as an upgrade does: a
 * new file renamed over the old, whose running programs now show theirs as
 * "(deleted)". */
static void install_copy(const char *from, int dir_fd, const char *name) {
        _cleanup_close_ int in = open(from, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(in, 0, "%s: %m", from);
        _cleanup_close_ int out = openat(dir_fd, "copy.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        cr_assert_geq(out, 0);
        ssize_t n;
        while ((n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0)) > 0)
                ;
        cr_assert_eq(n, 0, "copy: %m");
        cr_assert_eq(renameat(dir_fd, "copy.tmp", dir_fd, name), 0);
}

Test(job_lifecycle, a_damaged_run_json_keeps_a_job_whose_containment_holds_its_supervisor) {
        /* The supervisor from a binary that is replaced below. */
        _cleanup_close_ int state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(state_fd, 0);
        install_copy(getenv("BGRUN_TEST_SUPERVISOR"), state_fd, "bgrun-supervisor");
        char supervisor[PATH_MAX];
        snprintf(supervisor, sizeof supervisor, "%s/bgrun-supervisor", state_dir);
        rt->supervisor_path = supervisor;

        char id[JOB_ID_MAX];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        pid_t sup = j->live->supervisor.pid;
        cr_assert_eq(pidref_set_pid(&leftovers[0], sup), 0);
        cr_assert_eq(pidref_verify(j->live->run->pid, j->live->run->start_token, &leftovers[1]), PIDREF_OWNED);
        /* Where the containment its grant names holds it. */
        calls.contained_supervisor = sup;
        snprintf(calls.supervisor_cgroup, sizeof calls.supervisor_cgroup, "/test-then/%s", id);

        /* bgrund goes; meanwhile the job's run.json is damaged and an
         * upgrade replaces the supervisor's binary; bgrund comes back. */
        rt = runtime_free(rt);
        _cleanup_close_ int jobs_fd = openat(state_fd, "jobs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int job_fd = -EBADF;
        cr_assert_eq(job_store_open_job(jobs_fd, id, &job_fd), 0);
        cr_assert_eq(write_file_atomic_at(job_fd, JOB_RUN_FILE, "garbage", 7, 0600, 0), 0);
        install_copy(getenv("BGRUN_TEST_SUPERVISOR"), state_fd, "bgrun-supervisor");
        new_runtime();
        rt->supervisor_path = supervisor;
        ReapCounts counts;
        cr_assert_eq(runtime_load_jobs(rt, &counts), 0);

        j = runtime_find_job(rt, id);
        cr_assert_not_null(j);
        cr_assert_eq(j->state, JOB_STATE_RUNNING, "the job was kept, its supervisor running");
        cr_assert_eq(counts.background_kept, 1);
        cr_assert_eq(counts.released, 0);
        cr_assert_eq(j->live->supervisor.pid, sup, "the supervisor is watched");
        cr_assert_eq(pidref_check(&leftovers[1]), PIDREF_OWNED, "the command runs");

        /* It answers to bgrund as before. */
        job_kill(j);
        RUN_UNTIL(events.ended == 1);
        cr_assert_eq(events.ended_status, JOB_KILLED);
        cr_assert_eq(calls.kills, 0, "its supervisor tore it down, not a release");
}

/* A power loss once a Kill answered: every process and containment gone,
 * and of the job's directory only what was durable at the answer: spec.json,
 * the output file and the teardown slot. bgrund, starting, ends the job as
 * the answer said. */
Test(job_lifecycle, after_a_power_loss_the_record_keeps_what_kill_answered) {
        char id[JOB_ID_MAX];
        launch("exec sleep 100", id);
        RUN_UNTIL(events.running == 1);
        Job *j = runtime_find_job(rt, id);
        cr_assert_eq(pidref_set_pid(&leftovers[0], j->live->supervisor.pid), 0);
        cr_assert_eq(pidref_verify(j->live->run->pid, j->live->run->start_token, &leftovers[1]), PIDREF_OWNED);
        rt = runtime_free(rt);
        for (size_t i = 0; i < ELEMENTSOF(leftovers); i++)
                cr_assert_eq(pidref_kill(&leftovers[i], SIGKILL), 0);

        _cleanup_close_ int jobs_fd = -EBADF, job_fd = -EBADF;
        cr_assert_eq(job_store_open(state_dir, &jobs_fd), 0);
        cr_assert_eq(job_store_open_job(jobs_fd, id, &job_fd), 0);
        _cleanup_closedir_ DIR *d = fdopendir(dup(job_fd));
        cr_assert_not_null(d);
        for (struct dirent *de; (de = readdir(d));)
                if (de->d_name[0] != '.' && !streq(de->d_name, JOB_SPEC_FILE) && !streq(de->d_name, JOB_OUTPUT_FILE) &&
                    !streq(de->d_name, JOB_TEARDOWN_FILE))
                        cr_assert_eq(unlinkat(job_fd, de->d_name, 0), 0, "%s: %m", de->d_name);
        const JobTeardown answered = {
                .status = JOB_KILLED, .dead = true, .method = TEARDOWN_CGROUP_KILL, .confirmed_at = 1700000000654321,
        };
        cr_assert_eq(job_teardown_write(job_fd, &answered), 0);

        new_runtime();
        ReapCounts counts;
        cr_assert_eq(runtime_load_jobs(rt, &counts), 0);
        j = runtime_find_job(rt, id);
        cr_assert_not_null(j);
        RUN_UNTIL(job_is_ended(j));
        cr_assert_eq(j->status, JOB_KILLED);
        JobView v;
        cr_assert_eq(job_view(j, &v), 0);
        cr_assert_eq(v.status, JOB_KILLED);
        cr_assert(v.result->dead);
        cr_assert_eq(v.result->method, TEARDOWN_CGROUP_KILL, "the answer's method, not the release's");
        cr_assert_eq(v.result->confirmed_at, answered.confirmed_at);
        cr_assert_eq(v.teardown.confirmed_at, answered.confirmed_at);
        JobResult res;
        cr_assert_eq(job_store_read_result(job_fd, &res), 0);
        cr_assert_eq(res.status, JOB_KILLED);
        cr_assert_eq(res.confirmed_at, answered.confirmed_at);
}

/* --- the queue (issue #38): Queue and MaxParallel ----------------------- */

static Job *launch_queued(const char *session, uint32_t max_parallel) {
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "exec sleep 100");
        free(spec.session_id);
        spec.session_id = strdup(session);
        spec.queue = true;
        spec.max_parallel = max_parallel;
        return launch_spec(&spec);
}

Test(job_lifecycle, queued_jobs_start_in_launch_order_within_their_sessions_limit) {
        Job *j[5];
        for (int i = 0; i < 5; i++)
                j[i] = launch_queued("q", 2);
        cr_assert(job_is_starting(j[0]) && job_is_starting(j[1]));
        for (int i = 2; i < 5; i++) {
                cr_assert(job_is_queued(j[i]), "job %d: %s", i, job_state_to_string(j[i]->state));
                cr_assert_eq(queue_position(j[i]), (unsigned) i - 1);
                JobView v;
                cr_assert_eq(job_view(j[i], &v), 0);
                cr_assert_eq(v.status, JOB_QUEUED);
                cr_assert_eq(v.queue_position, (unsigned) i - 1);
        }
        cr_assert_eq(rt->n_running, 2, "queued jobs do not count as running");
        cr_assert_eq(events.new, 3, "a queued job is told at once (JobNew)");
        RUN_UNTIL(events.running == 2);
        cr_assert_eq(events.new, 5);

        /* One ends: the first queued starts, the others move up. */
        job_kill(j[0]);
        RUN_UNTIL(j[2]->state == JOB_STATE_RUNNING);
        cr_assert(job_is_queued(j[3]) && job_is_queued(j[4]));
        cr_assert_eq(queue_position(j[3]), 1);
        cr_assert_eq(events.new, 5, "no second JobNew when it starts");

        /* Out of the queue, never started. */
        job_kill(j[3]);
        cr_assert(job_is_ended(j[3]));
        cr_assert_eq(j[3]->status, JOB_KILLED, "what listings and JobRemoved say");
        JobView v;
        cr_assert_eq(job_view(j[3], &v), 0);
        cr_assert_eq(v.status, JOB_KILLED);
        cr_assert_not(v.result->executed);
        cr_assert(v.result->dead);
        cr_assert_eq(v.result->method, TEARDOWN_NEVER_STARTED);
        cr_assert_eq(queue_position(j[4]), 1);
        cr_assert_eq(rt->n_running, 2);

        job_kill(j[1]);
        job_kill(j[2]);
        RUN_UNTIL(j[4]->state == JOB_STATE_RUNNING);
        job_kill(j[4]);
        RUN_UNTIL(rt->n_running == 0);
}

/* The smallest MaxParallel of a session's live jobs holds, found again
 * when the last that carried it leaves; another session is not held. */
/* A session's MaxParallel is the newest launch's that names one: it holds
 * while any of the session's jobs is live, a launch that names none carries
 * it, and one that raises it starts the session's queued jobs first. */
Test(job_lifecycle, the_newest_max_parallel_holds_and_another_session_is_free) {
        Job *a = launch_queued("s1", 3), *b = launch_queued("s1", 1);
        cr_assert(job_is_starting(a));
        cr_assert(job_is_queued(b), "MaxParallel=1 with one running: %s", job_state_to_string(b->state));
        SessionGroup *g = queue_session(rt, 0, "s1");
        cr_assert_not_null(g);
        cr_assert_eq(g->limit, 1, "the newest launch's");
        Job *c = launch_queued("s2", 1);
        cr_assert(job_is_starting(c), "a session held by its limit holds back no other");
        RUN_UNTIL(events.running == 2);

        /* b (the one that named 1) taken out: the limit holds, and a launch
         * that names none carries it. */
        job_kill(b);
        cr_assert_eq(g->limit, 1);
        Job *d = launch_queued("s1", 0);
        cr_assert(job_is_queued(d), "under the session's 1: %s", job_state_to_string(d->state));
        cr_assert_eq(d->max_parallel, 1, "inherited");
        /* A launch that raises it queues behind d, and both start. */
        Job *e = launch_queued("s1", 3);
        cr_assert_eq(g->limit, 3);
        cr_assert(job_is_queued(e), "never before the session's queued jobs");
        RUN_UNTIL(job_is_running(d) && job_is_running(e));
        cr_assert_eq(g->running, 3);

        /* Without Queue, past the limit: refused, nothing created. */
        _cleanup_(job_spec_done) JobSpec spec;
        spec_for(&spec, "true");
        free(spec.session_id);
        spec.session_id = strdup("s2");
        spec.max_parallel = 1;
        Job *none = NULL;
        cr_assert_eq(runtime_launch(rt, &spec, &none), BGRUN_ERROR(TOO_MANY_PARALLEL));
        uint64_t limit = 0;
        cr_assert_eq(queue_check_room(rt, &spec, &limit), BGRUN_ERROR(TOO_MANY_PARALLEL));
        cr_assert_eq(limit, 1);

        job_kill(a);
        job_kill(c);
        job_kill(d);
        job_kill(e);
        RUN_UNTIL(rt->n_running == 0);
        cr_assert_null(queue_session(rt, 0, "s1"), "a session with no live job keeps nothing");
        cr_assert_null(queue_session(rt, 0, "s2"));
}

/* A queued job kept in the store is queued again by a new runtime, in
 * order, and started from there; one whose start never came is run once. */
Test(job_lifecycle, queued_jobs_are_loaded_again_in_order) {
        Job *a = launch_queued("r", 1), *b = launch_queued("r", 1), *c = launch_queued("r", 1);
        char ids[3][JOB_ID_MAX];
        strcpy(ids[0], a->id);
        strcpy(ids[1], b->id);
        strcpy(ids[2], c->id);
        RUN_UNTIL(events.running == 1);
        calls.ready_async = true; /* b's start waits for its containment */
        job_kill(a);
        RUN_UNTIL(job_is_ended(a) && job_is_starting(b));
        /* bgrund goes while b is held, before its command may run: its
         * marker is still there. */
        cr_assert_eq(b->state, JOB_STATE_STARTING);
        rt = runtime_free(rt);
        new_runtime();
        rt->supervisor_path = getenv("BGRUN_TEST_SUPERVISOR");
        cr_assert_eq(runtime_load_jobs(rt, NULL), 0);
        b = runtime_find_job(rt, ids[1]);
        c = runtime_find_job(rt, ids[2]);
        cr_assert(b && c);
        cr_assert(job_is_queued(b) && job_is_queued(c), "%s %s", job_state_to_string(b->state),
                  job_state_to_string(c->state));
        cr_assert_eq(queue_position(b), 1);
        cr_assert_eq(queue_position(c), 2);
        RUN_UNTIL(b->state == JOB_STATE_RUNNING);
        cr_assert(job_is_queued(c));
        job_kill(b);
        RUN_UNTIL(c->state == JOB_STATE_RUNNING);
        job_kill(c);
        RUN_UNTIL(rt->n_running == 0);
}

/* Many that may start at once start over several turns of the loop, at
 * most QUEUE_STARTS_PER_TURN (16) a turn, so that bgrund serves others in
 * between. */
Test(job_lifecycle, a_queue_starts_a_bounded_number_a_turn) {
        Job *blocker = launch_queued("b", 1);
        Job *j[20];
        for (int i = 0; i < 20; i++)
                j[i] = launch_queued("b", 0);
        for (int i = 0; i < 20; i++)
                cr_assert(job_is_queued(j[i]));
        RUN_UNTIL(events.running == 1);
        job_kill(blocker);
        RUN_UNTIL(events.running == 2);
        /* A launch that names 21 raises the session's limit: the 19 still
         * queued and it start, a bounded number a turn. */
        Job *raise = launch_queued("b", 21);
        unsigned most = 0;
        uint64_t deadline = now_monotonic_usec() + 10 * USEC_PER_SEC;
        while (rt->n_running < 21 && now_monotonic_usec() < deadline) {
                unsigned before = rt->n_running;
                cr_assert_geq(sd_event_run(event, 100 * USEC_PER_MSEC), 0);
                if (rt->n_running > before && rt->n_running - before > most)
                        most = rt->n_running - before;
        }
        cr_assert_eq(rt->n_running, 21);
        cr_assert_leq(most, 16, "started in one turn at most: %u", most);
        cr_assert_geq(most, 8, "several started in one turn (else this shows nothing): %u", most);
        for (int i = 0; i < 20; i++)
                job_kill(j[i]);
        job_kill(raise);
        RUN_UNTIL(rt->n_running == 0);
}
