/* SPDX-License-Identifier: MIT */
/*
 * bgrun-supervisor: runs one job's command inside its containment and
 * publishes the result. It needs no live bgrund: it reads the job's spec from
 * the store, runs `/bin/sh -c COMMAND` as the job's owner, enforces the
 * wall-clock limit, and at the end kills whatever is left, confirms the
 * containment empty and writes result.json.
 *
 * bgrund spawns it (supervisor-process.c) with a readiness pipe: one byte once
 * the command was exec'd and run.json written, EOF without it when setup
 * failed. Started ahead of time (--pooled), it first reads its job's id
 * from the go socket (pooled.c). SIGTERM means "kill the job", SIGUSR1
 * "stop it gracefully" (supervisor-protocol.h), and the supervisor's own
 * exit (seen through its pidfd) means result.json is final. A job with
 * input has a control socket in its directory (input-control.c).
 *
 * Systemd mechanism: spawned held (--go-fd); bgrund lets it go once systemd
 * has moved it into the job's transient scope (Delegate=yes).
 *
 *   main.c                  arguments, the store and the spec, the go byte
 *   pooled.c                started ahead of time: the wait for a job, the fork into its cgroup
 *   supervise.c             start, wait for the end, tear down, publish
 *   command-start.c         the command's start: its pipes, its sandbox's plan, its child
 *   exec-child.c            the forked child that becomes the command
 *   sandbox-apply.c         a sandboxed job's namespaces and mounts, in that child:
 *   sandbox-mount.c           the mount primitives
 *   sandbox-dev.c             its own /dev
 *   sandbox-landlock.c        its Landlock domains
 *   sandbox-seccomp.c         its seccomp filter, which hands its socket calls to
 *   socket-mediator.c       the supervisor, which has them made by
 *   socket-broker.c         the job's socket broker (this binary, --socket-broker)
 *   output-relay.c          its output: pipe → the job's output files, capped
 *   input-control.c         its input pipe or terminal, and the control socket
 *   environment.c           the command's environment
 *   payload-containment.h   the containment's operations, one table per kind:
 *   payload-cgroup.c          every mechanism that contains
 *   payload-process-tree.c    process_group
 *   publish.c               the one place a result is built
 *   subreaper.c             the job's orphans are ours to reap
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "git-cleanup.h"
#include "git-placeholders.h"
#include "job-store.h"
#include "job-teardown.h"
#include "log.h"
#include "parse-util.h"
#include "pooled.h"
#include "macro.h"
#include "publish.h"
#include "sandbox-plan.h"
#include "socket-broker.h"
#include "supervise.h"

/* Held until bgrund says the containment is ready. EOF means bgrund gave the
 * attempt up or died: nothing ran, so there is nothing to publish, and a
 * restarted bgrund records the job as never started. */
static int wait_for_go(int go_fd) {
        char c;
        ssize_t n;
        do
                n = read(go_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        safe_close(go_fd);
        if (n == 1)
                return 0;
        log_info("bgrund gave up the job before its containment was ready; nothing was run");
        return -ECANCELED;
}

static int run(int argc, char **argv) {
        static const struct option options[] = {
                { "job", required_argument, NULL, 'j' },
                { "state-dir", required_argument, NULL, 'd' },
                { "ready-fd", required_argument, NULL, 'r' },
                { "go-fd", required_argument, NULL, 'g' },
                { "nofile-soft", required_argument, NULL, 'n' },
                { "pooled", no_argument, NULL, 'p' },
                { "remove-placeholders", no_argument, NULL, 'R' },
                {}
        };
        const char *state_dir = BGRUN_STATE_DIR;
        char *id = NULL, pooled_id[JOB_ID_MAX];
        int ready_fd = -EBADF, go_fd = -EBADF;
        bool pooled = false, remove_placeholders = false;
        int c;
        uint64_t nofile;
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'j': id = optarg; break;
                case 'd': state_dir = optarg; break;
                case 'r':
                        if (parse_fd(optarg, &ready_fd) < 0)
                                return log_error_errno(-EINVAL, "Invalid --ready-fd: %s", optarg);
                        break;
                case 'g':
                        if (parse_fd(optarg, &go_fd) < 0)
                                return log_error_errno(-EINVAL, "Invalid --go-fd: %s", optarg);
                        break;
                case 'n': {
                        if (parse_uint64_strict(optarg, &nofile, NULL) < 0)
                                return log_error_errno(-EINVAL, "Invalid --nofile-soft: %s", optarg);
                        /* bgrund raised its own; the command gets what bgrund got. */
                        struct rlimit rl;
                        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0) {
                                rl.rlim_cur = MIN((rlim_t) nofile, rl.rlim_max);
                                (void) setrlimit(RLIMIT_NOFILE, &rl);
                        }
                        break;
                }
                case 'p': pooled = true; break;
                case 'R': remove_placeholders = true; break;
                default: return -EINVAL;
                }
        if (pooled && go_fd >= 0) {
                int r = pooled_wait_for_job(go_fd, pooled_id);
                if (r == -ECANCELED || r == 1)
                        return 0; /* no job for us, or our child runs it */
                if (r < 0)
                        return log_error_errno(r, "Cannot read the job this supervisor is to run: %m");
                /* The id takes the placeholder's place in our command line,
                 * where bgrund finds a supervisor by its job (when a record
                 * is damaged) and where ps shows it. */
                if (id && strlen(id) == JOB_ID_LEN)
                        memcpy(id, pooled_id, JOB_ID_LEN);
                id = pooled_id;
        }
        if (!job_id_is_valid(id))
                return log_error_errno(-EINVAL,
                                       "Usage: bgrun-supervisor --job ID [--state-dir DIR] [--ready-fd FD] [--go-fd FD] [--nofile-soft N] [--pooled]\n"
                                       "       bgrun-supervisor --remove-placeholders --job ID [--state-dir DIR]");

        _cleanup_(supervisor_done) Supervisor s = SUPERVISOR_NULL;
        s.ready_fd = ready_fd >= 0 ? ready_fd : -EBADF;
        /* bgrund passed these across exec; the command must not inherit them. */
        if (s.ready_fd >= 0)
                (void) fcntl(s.ready_fd, F_SETFD, FD_CLOEXEC);
        if (go_fd >= 0)
                (void) fcntl(go_fd, F_SETFD, FD_CLOEXEC);
        strcpy(s.spec.id, id);
        s.state_dir = state_dir;

        _cleanup_close_ int jobs_fd = -EBADF;
        int r = job_store_open(state_dir, &jobs_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to open the job store %s: %m", state_dir);
        r = job_store_open_job(jobs_fd, id, &s.dir_fd);
        if (r < 0)
                return log_error_errno(r, "Failed to open job %s: %m", id);
        r = job_store_read_spec(s.dir_fd, &s.spec);
        if (remove_placeholders)
                /* bgrund's: an ended job's supervisor died before it removed them. */
                return r < 0 ? log_error_errno(r, "Failed to read job %s: %m", id) : git_cleanup(s.dir_fd, &s.spec);
        if (r < 0)
                return publish_setup_failure(s.dir_fd, &s.spec, r, "read the job's spec");
        /* The one fsync before Launch answers (job-store.h), made while
         * bgrund readies the containment, and before anything runs: a job
         * whose record a power loss could take must not run. */
        r = job_teardown_create_slot(s.dir_fd);
        if (r < 0)
                return publish_setup_failure(s.dir_fd, &s.spec, r, "make the job's teardown slot");
        if (sandbox_requested(&s.spec) && s.spec.protect_git) {
                r = git_placeholders_create(s.dir_fd);
                if (r < 0)
                        return publish_setup_failure(s.dir_fd, &s.spec, r, "make the job's placeholder record");
        }
        r = job_store_sync_spec(s.dir_fd);
        if (r < 0)
                return publish_setup_failure(s.dir_fd, &s.spec, r, "make the job's record durable");

        if (go_fd >= 0) {
                r = wait_for_go(go_fd);
                if (r < 0)
                        return r;
        }
        return supervise(&s);
}

int main(int argc, char **argv) {
        /* A sandboxed job's socket broker is this binary too (socket-broker.h). */
        if (argc >= 2 && streq(argv[1], "--socket-broker"))
                return socket_broker_main(argc - 2, argv + 2) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        /* What bgrund runs with is not ours to keep: the usual umask for the
         * cgroups and files made here and for the command, and no death by
         * SIGPIPE when bgrund, the other end of the readiness pipe, is gone. */
        umask(0022);
        signal(SIGPIPE, SIG_IGN);
        log_setup("bgrun-supervisor", LOG_TARGET_AUTO);
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
