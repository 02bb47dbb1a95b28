/* SPDX-License-Identifier: MIT */
/* The command's start (command-start.h): its output and input, its
 * sandbox's plan, the child that becomes it, and what it reports. */
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "command-start.h"
#include "environment.h"
#include "exec-child.h"
#include "git-placeholders.h"
#include "log.h"
#include "network-join.h"
#include "session-network.h"
#include "macro.h"
#include "publish.h"
#include "strv.h"
#include "supervisor-protocol.h"

static int fail_setup(Supervisor *s, int error, const char *step) {
        return publish_setup_failure(s->dir_fd, &s->spec, error, step);
}

/* The job's user cannot enter its cwd, or has no program of Argv's name in
 * its PATH, or its caller's deadline passed: nothing ran, which leaves no record,
 * as if Launch had refused it before anything was made. The child that
 * tried forked nothing and is reaped, so nothing of the job is left; bgrund,
 * told over the readiness pipe, removes the job once we are gone. With
 * nobody to tell (no readiness pipe, bgrund gone) a failed record is what
 * is left. The path stays out of the log, as every job's cwd does. */
static int refuse_input(Supervisor *s, const ExecFailure *f) {
        static const struct { char message; const char *why; } refusals[] = {
                [EXEC_REFUSED_CWD] = { SUPERVISOR_CWD_REFUSED, "its user cannot enter its working directory" },
                [EXEC_REFUSED_PROGRAM] = { SUPERVISOR_PROGRAM_REFUSED, "its program is not found in its PATH" },
                [EXEC_REFUSED_DEADLINE] = { SUPERVISOR_DEADLINE_PASSED, "its LaunchDeadlineUSec passed" },
                [EXEC_REFUSED_SANDBOX] = { SUPERVISOR_SANDBOX_REFUSED, "its sandbox cannot be enforced here" },
                [EXEC_REFUSED_PATH] = { SUPERVISOR_PATH_REFUSED, "a path of its sandbox is not there for its user" },
        };
        s->containment.ops->cleanup(&s->containment);
        /* A sandbox's refusal says which option, and the error's number or
         * which of its paths. */
        bool path = f->refused == EXEC_REFUSED_PATH;
        char message[3] = { refusals[f->refused].message, (char) f->option,
                            (char) (path ? f->entry : MIN(-f->error, 255)) };
        size_t n = f->refused == EXEC_REFUSED_SANDBOX || path ? 3 : 1;
        if (s->ready_fd < 0 || write(s->ready_fd, message, n) != (ssize_t) n)
                return fail_setup(s, f->error, f->step);
        s->ready_fd = safe_close(s->ready_fd);
        log_info("Job %s: %s; nothing was run", s->spec.id, refusals[f->refused].why);
        return f->error;
}

/* EnforceLimits and a limit its cgroup cannot enforce: refused before
 * anything of the command exists, told as a cwd refusal is, with the
 * limits, so that bgrund can name them. */
static int check_limits(Supervisor *s) {
        if (!s->spec.enforce_limits)
                return 0;
        _cleanup_free_ char *controllers = NULL;
        (void) s->containment.ops->controllers(&s->containment, &controllers);
        unsigned bits = job_limits_unenforced(&s->spec, controllers);
        if (!bits)
                return 0;
        s->containment.ops->cleanup(&s->containment);
        char message[2] = { SUPERVISOR_LIMITS_REFUSED, (char) bits };
        if (s->ready_fd < 0 || write(s->ready_fd, message, sizeof message) != sizeof message)
                return fail_setup(s, -EOPNOTSUPP, "enforce the limits asked for");
        s->ready_fd = safe_close(s->ready_fd);
        log_info("Job %s: limits it asked for cannot be enforced in its cgroup; nothing was run", s->spec.id);
        return -EOPNOTSUPP;
}

/* A sandboxed job's child, before it runs, handed us (f): with
 * AllowedDomains, the socket it made on the job's loopback, served by the
 * job's proxy from here (outside its network), which is ready before the
 * command runs, or the command does not run (< 0, *ret_step says why);
 * then its seccomp listener, and its socket broker goes into the job's
 * containment. Without the listener the child reports that it was not
 * taken, and goes. */
static int take_sandbox(Supervisor *s, const ExecFailure *f, const char **ret_step) {
        PayloadContainment *c = &s->containment;
        if (f->proxy_fd >= 0) {
                int fd = (int) syscall(SYS_pidfd_getfd, s->child.fd, f->proxy_fd, 0);
                if (fd < 0)
                        return *ret_step = "take the socket of the job's proxy", negative_errno();
                int r = proxy_process_start(&s->proxy, &s->spec, fd, ret_step);
                if (r < 0)
                        return r;
        }
        int r = socket_mediator_take_listener(&s->sockets, s->child.fd, f->error);
        if (r >= 0)
                r = c->ops->adopt(c, (pid_t) f->entry);
        if (r < 0)
                log_error_errno(r, "Job %s: cannot take its socket calls: %m", s->spec.id);
        return 0;
}

int command_start(Supervisor *s) {
        PayloadContainment *c = &s->containment;
        const char *step;
        int r = check_limits(s);
        if (r < 0)
                return r;

        /* The command writes into a pipe that only we read: never into a
         * file of its record, which it could fill, sparsely extend or keep. */
        int write_fd = -EBADF;
        r = output_relay_open(&s->output, s->dir_fd, &s->spec, &write_fd, &step);
        if (r < 0)
                return fail_setup(s, r, step);
        /* Ours closes when we return: EOF is when the job's ends are gone. */
        _cleanup_close_ int output_write_fd = write_fd;

        r = input_control_open(&s->input, s->dir_fd, &s->spec, output_write_fd, &step);
        if (r < 0)
                return fail_setup(s, r, step);

        _cleanup_strv_free_ char **env = NULL;
        r = job_environment(&s->spec, &env);
        if (r < 0)
                return fail_setup(s, r, "build the environment");

        /* The sandbox's mounts are planned here, where we may allocate;
         * the child only makes the system calls. */
        _cleanup_(sandbox_plan_done) SandboxPlan plan = {};
        if (sandbox_requested(&s->spec)) {
                _cleanup_free_ char *why = NULL;
                r = sandbox_plan_build(&s->spec, s->state_dir, &plan, &why);
                if (r < 0)
                        return fail_setup(s, r, "plan the sandbox");
                r = socket_mediator_open(&s->sockets);
                if (r < 0)
                        return fail_setup(s, r, "make the socket broker's pair");
        }

        /* ProtectGit's placeholders are recorded before they are made. */
        _cleanup_close_ int git_record_fd = -EBADF;
        if (sandbox_requested(&s->spec) && s->spec.protect_git) {
                git_record_fd = openat(s->dir_fd, GIT_PLACEHOLDERS_FILE, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
                if (git_record_fd < 0)
                        return fail_setup(s, negative_errno(), "open the job's placeholder record");
        }

        /* A session's network: a running member's namespaces, to join. */
        bool user_namespace = sandbox_requested(&s->spec) && geteuid() != 0;
        _cleanup_(network_join_done) NetworkJoin join = { .netns_fd = -EBADF, .userns_fd = -EBADF };
        bool joins = false;
        if (session_network_shared(&s->spec)) {
                r = network_join_open(s->dir_fd, user_namespace, s->spec.uid, &join);
                if (r < 0)
                        log_warning_errno(r, "Job %s: its session's network is not named readably (%m): "
                                          "it makes one", s->spec.id);
                joins = r > 0;
        }

        pid_t pid;
        _cleanup_close_ int report_fd = -EBADF;
        r = exec_child_fork(&(ExecChild) {
                .spec = &s->spec,
                .containment = c,
                .output_fd = output_write_fd,
                .input = &s->input,
                .env = env,
                .sandbox = plan.mounts ? &plan : NULL,
                .user_namespace = user_namespace,
                .sockets = sandbox_requested(&s->spec) ? &s->sockets : NULL,
                .git_record_fd = git_record_fd,
                .network = joins ? &join : NULL,
        }, &pid, &report_fd, &step);
        input_control_forked(&s->input);
        socket_mediator_forked(&s->sockets);
        if (r < 0)
                return fail_setup(s, r, step);

        r = pidref_set_pid(&s->child, pid);
        if (r < 0) {
                /* Without a pidfd nothing may be signalled; our own unreaped
                 * child cannot be recycled, so reaping it is still safe. */
                log_error_errno(r, "Cannot get a pidfd for the job's process: %m");
                c->ops->kill(c, &s->child);
                (void) waitpid(pid, NULL, 0);
                return fail_setup(s, r, "open a pidfd for the command");
        }

        ExecFailure f;
        r = exec_child_wait(report_fd, &f);
        if (r > 0 && f.refused == EXEC_LISTENER) {
                r = take_sandbox(s, &f, &step);
                if (r < 0) {
                        c->ops->kill(c, &s->child);
                        (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                        return fail_setup(s, r, step);
                }
                r = exec_child_wait(report_fd, &f);
        }
        if (r > 0) {
                /* It never exec'd, so it forked nothing, and it exits
                 * after reporting: reaping it is the whole teardown. */
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                if (f.refused != EXEC_NOT_REFUSED)
                        return refuse_input(s, &f);
                return fail_setup(s, f.error, f.step);
        }
        r = input_control_receive_terminal(&s->input);
        if (r < 0) {
                /* Sent before the exec, or the exec was not reached: never. */
                c->ops->kill(c, &s->child);
                (void) waitid(P_PIDFD, (id_t) s->child.fd, &(siginfo_t) {}, WEXITED);
                return fail_setup(s, r, "take the job's terminal");
        }
        return 0;
}

