/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <netinet/in.h>

#include "environment.h"
#include "exec-child.h"
#include "fd-passing.h"
#include "launch-options.h"
#include "macro.h"
#include "privilege.h"
#include "sandbox-apply.h"
#include "socket-broker.h"

/* Everything from here to the exec runs in the child, which shares the
 * supervisor's memory until it execs (start_child()). The rule: system calls
 * only, and writes to its own stack: no malloc, no stdio, no libcap. Each
 * changes heap or lock state that is the supervisor's, which resumes once
 * the child execs and would find the allocator mid-change or a lock held by
 * a program that is gone. */

/* Whether the child shares our memory until it execs (start_child()). */
#if defined(__SANITIZE_ADDRESS__)
#  define EXEC_CHILD_SHARES_MEMORY 0
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define EXEC_CHILD_SHARES_MEMORY 0
#  endif
#endif
#ifndef EXEC_CHILD_SHARES_MEMORY
#  define EXEC_CHILD_SHARES_MEMORY 1
#endif

static _Noreturn void report_full(int report_fd, int error, ExecRefusal refused, int option, int entry,
                                  const char *step) {
        ExecFailure f = { .error = error, .refused = refused, .option = option, .entry = entry };
        /* Cut to fit, as snprintf() would (the struct is zeroed: the last
         * byte stays the terminator). */
        for (size_t i = 0; i + 1 < sizeof f.step && step[i]; i++)
                f.step[i] = step[i];
        (void) !write(report_fd, &f, sizeof f);
        _exit(127);
}

static _Noreturn void report_as(int report_fd, int error, ExecRefusal refused, const char *step) {
        report_full(report_fd, error, refused, 0, 0, step);
}

/* A sandbox option that cannot be enforced here: which, and why. */
static _Noreturn void report_sandbox(int report_fd, int error, LaunchOption option, const char *step) {
        report_full(report_fd, error, EXEC_REFUSED_SANDBOX, (int) option, 0, step);
}

static _Noreturn void report(int report_fd, int error, const char *step) {
        report_as(report_fd, error, EXEC_NOT_REFUSED, step);
}

/* The value of name in env (NULL-terminated NAME=VALUE), or NULL. */
static const char *env_value(char *const *env, const char *name) {
        size_t n = strlen(name);
        for (char *const *e = env; *e; e++)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

/* execve(path), and for a file the kernel cannot execute (no #! line) the
 * shell with it, as execvp(3) does. Returns only on failure, with errno. */
static void exec_file(const char *path, char *const *argv, char *const *env) {
        execve(path, argv, env);
        if (errno != ENOEXEC)
                return;
        size_t n = 0;
        while (argv[n] && n < LAUNCH_ARGV_MAX_WORDS)
                n++;
        char *sh_argv[LAUNCH_ARGV_MAX_WORDS + 2]; /* on the stack (64 KiB): no allocation here */
        sh_argv[0] = (char *) "sh";
        sh_argv[1] = (char *) path;
        for (size_t i = 1; i <= n; i++)
                sh_argv[i + 1] = argv[i];
        execve("/bin/sh", sh_argv, env);
        errno = ENOEXEC;
}

/* Argv: the program by its path, or searched in the job's own PATH (not
 * ours) as execvp(3) searches. Not found, or found nowhere executable by
 * the job's user: refused, as a cwd it cannot enter is. */
static _Noreturn void exec_argv(char *const *argv, char *const *env, int report_fd) {
        const char *file = argv[0];
        if (strchr(file, '/')) {
                exec_file(file, argv, env);
                int e = errno;
                report_as(report_fd, -e, e == ENOENT || e == EACCES || e == ENOTDIR || e == ENOEXEC
                                  ? EXEC_REFUSED_PROGRAM : EXEC_NOT_REFUSED, EXEC_CHILD_STEP_PROGRAM);
        }
        const char *path = env_value(env, "PATH") ?: "/bin:/usr/bin";
        size_t file_len = strlen(file);
        bool denied = false;
        char buf[PATH_MAX];
        for (const char *p = path;; p++) {
                const char *end = strchrnul(p, ':');
                size_t dir_len = (size_t) (end - p);
                /* An empty entry is the working directory, as for execvp. */
                if (dir_len + 1 + file_len < sizeof buf) {
                        if (dir_len > 0) {
                                memcpy(buf, p, dir_len);
                                buf[dir_len] = '/';
                                memcpy(buf + dir_len + 1, file, file_len + 1);
                        } else
                                memcpy(buf, file, file_len + 1);
                        exec_file(buf, argv, env);
                        switch (errno) {
                        case EACCES:
                                denied = true;
                                break;
                        case ENOENT: case ENOTDIR: case ESTALE: case ELOOP: case ENAMETOOLONG: case ENODEV:
                        case ETIMEDOUT:
                                break;
                        default: /* found, and failed to run: not the caller's input */
                                report(report_fd, negative_errno(), "execute the program");
                        }
                }
                if (!*end)
                        break;
                p = end;
        }
        report_as(report_fd, denied ? -EACCES : -ENOENT, EXEC_REFUSED_PROGRAM, EXEC_CHILD_STEP_PROGRAM);
}

/* The new session's controlling terminal, as a login's, and the job's
 * stdio. */
static void take_terminal(int tty_fd, int report_fd) {
        if (ioctl(tty_fd, TIOCSCTTY, 0) < 0)
                report(report_fd, negative_errno(), "take the terminal");
        if (dup2(tty_fd, STDIN_FILENO) < 0 || dup2(tty_fd, STDOUT_FILENO) < 0 || dup2(tty_fd, STDERR_FILENO) < 0)
                report(report_fd, negative_errno(), "connect stdio");
}

/* A terminal from the sandbox's own devpts instance (its /dev/pts/ptmx),
 * sized as the spec says, its pty its user's (the lookups' fsuid), its
 * master sent to the supervisor over channel: the slave's descriptor, or
 * -errno. */
static int own_terminal(const JobSpec *spec, int channel) {
        int master = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (master < 0)
                return negative_errno();
        int unlock = 0, slave = -EBADF;
        struct winsize ws = { .ws_row = spec->tty_rows, .ws_col = spec->tty_columns };
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0 || ioctl(master, TIOCSWINSZ, &ws) < 0 ||
            (slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
                int r = negative_errno();
                close(master);
                return r;
        }
        int r = fd_send(channel, 'T', master, 0);
        r = r < 0 ? r : slave;
        close(master);
        if (r < 0)
                close(slave);
        return r;
}

/* With AllowedDomains, the socket its proxy serves from outside: on the
 * job's loopback (inside its network), its port in the job's proxy
 * variables; close-on-exec, so the command has no descriptor of it. */
static int listen_for_proxy(char **env) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof a;
        if (bind(fd, (struct sockaddr *) &a, sizeof a) < 0 || listen(fd, SOMAXCONN) < 0 ||
            getsockname(fd, (struct sockaddr *) &a, &len) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        job_environment_set_proxy_port(env, ntohs(a.sin_port));
        return fd;
}

/* A sandboxed job's last steps, as its user: its socket broker, then its
 * own Landlock domain and seccomp filter, whose listener goes to the
 * supervisor (with AllowedDomains, the proxy's socket too). */
static void confine(const ExecChild *x, const SandboxWritable *writable, int report_fd) {
        LaunchOption first = sandbox_first_option(x->spec);
        char ids[SANDBOX_WRITABLE_MAX * 12];
        int r = sandbox_writable_mount_ids(writable, ids, sizeof ids);
        if (r < 0)
                report_sandbox(report_fd, r, first, "find the job's writable mounts");
        int broker = socket_broker_spawn(socket_mediator_child_channel(x->sockets), ids);
        if (broker < 0)
                report(report_fd, broker, "start the job's socket broker");
        int proxy_fd = -1;
        if (x->spec->allowed_domains) {
                proxy_fd = listen_for_proxy(x->env);
                if (proxy_fd < 0)
                        report_sandbox(report_fd, proxy_fd, LAUNCH_OPTION_ALLOWED_DOMAINS,
                                       "listen for the job's proxy on its loopback");
        }
        int listener;
        SandboxFailure sf;
        r = sandbox_confine(x->spec, x->sandbox, writable, &listener, &sf);
        if (r < 0)
                report_sandbox(report_fd, r, sf.option, sf.step);
        /* Filtered from here: a sendmsg() of it would wait for its own
         * answer. The supervisor takes it (pidfd_getfd) while we wait; one
         * that cannot (no CAP_SYS_PTRACE over another user's process) could
         * not take the job's calls either: refused. */
        socket_mediator_close_parents(x->sockets);
        ExecFailure f = { .error = listener, .refused = EXEC_LISTENER, .entry = broker, .proxy_fd = proxy_fd };
        char taken;
        if (write(report_fd, &f, sizeof f) != (ssize_t) sizeof f ||
            read(socket_mediator_child_taken(x->sockets), &taken, 1) != 1)
                report_sandbox(report_fd, -EPERM, first, "hand its socket calls to its supervisor");
        close(listener);
        if (proxy_fd >= 0)
                close(proxy_fd);
}

/* In the forked child. Every step that fails is reported by name; the
 * pipe closes on exec, which is how the parent learns it succeeded. */
static _Noreturn void exec_child(const ExecChild *x, SandboxUserNamespace userns, bool born_inside, int report_fd) {
        const JobSpec *spec = x->spec;
        const char *step = "";
        int r;

        /* The supervisor blocks the signals it reads from a signalfd and
         * ignores SIGPIPE; both would survive exec. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);

        if (!born_inside) {
                r = x->containment->ops->enter(x->containment, &step);
                if (r < 0)
                        report(report_fd, r, step);
        }
        if (setsid() < 0)
                report(report_fd, negative_errno(), "start a session");
        /* A session keyring of its own: bgrund's (which every supervisor
         * inherits) must not be shared between jobs, or between owners. */
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
                report(report_fd, negative_errno(), "join a new session keyring");

        int tty_fd = x->input ? input_control_child_tty(x->input) : -EBADF;
        int stdin_fd = x->input ? input_control_child_stdin(x->input) : -EBADF;
        int terminal_channel = x->input ? input_control_child_terminal(x->input) : -EBADF;
        if (tty_fd >= 0)
                take_terminal(tty_fd, report_fd);
        else if (terminal_channel < 0) {
                int in_fd = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (in_fd < 0 || dup2(in_fd, STDIN_FILENO) < 0 || dup2(x->output_fd, STDOUT_FILENO) < 0 ||
                    dup2(x->output_fd, STDERR_FILENO) < 0)
                        report(report_fd, negative_errno(), "connect stdio");
        }

        /* The sandbox, while we may still make namespaces: the command
         * never runs outside it for an instant. */
        SandboxFailure sf;
        SandboxWritable writable = { .n = 0 };
        r = sandbox_apply(&(SandboxSetup) { .spec = spec, .plan = x->sandbox, .userns = userns,
                                            .userns_fd = x->network ? x->network->userns_fd : -EBADF,
                                            .netns_fd = x->network ? x->network->netns_fd : -EBADF,
                                            .git_record_fd = x->git_record_fd, .env = x->env },
                          &writable, &sf);
        if (r < 0 && sf.entry >= 0)
                report_full(report_fd, r, EXEC_REFUSED_PATH, (int) sf.option, sf.entry, sf.step);
        if (r < 0)
                report_sandbox(report_fd, r, sf.option, sf.step);
        /* A sandboxed job's terminal: from its own devpts instance. */
        if (terminal_channel >= 0) {
                r = own_terminal(spec, terminal_channel);
                if (r < 0)
                        report(report_fd, r, "open a terminal of its own");
                take_terminal(r, report_fd);
        }

        r = drop_privileges(spec->uid, spec->gid, spec->groups, (int) spec->n_groups);
        if (r < 0)
                report(report_fd, r, "drop privileges");
        if (x->sockets)
                confine(x, &writable, report_fd);
        sandbox_writable_done(&writable);
        /* The check of cwd: as the owner, with the owner's groups, so a
         * directory the owner may not enter fails here as one that does not
         * exist; by the process that uses it, so nothing changes between
         * check and use; and never in bgrund, whose one loop a lookup that
         * hangs (a FUSE mount that never answers) would hold for everyone. */
        if (chdir(spec->cwd) < 0)
                report_as(report_fd, negative_errno(), EXEC_REFUSED_CWD, EXEC_CHILD_STEP_CWD);
        /* The last look at the caller's deadline, after everything that can
         * wait (bgrund's checked it before letting us go; cwd's lookup may
         * have hung since): a caller that gave up never has it run. */
        struct timespec now;
        if (spec->launch_deadline_usec > 0 && clock_gettime(CLOCK_REALTIME, &now) >= 0 &&
            (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000 >= spec->launch_deadline_usec)
                report_as(report_fd, -ETIME, EXEC_REFUSED_DEADLINE, EXEC_CHILD_STEP_DEADLINE);

        if (spec->argv)
                exec_argv(spec->argv, x->env, report_fd);
        char sh[] = "sh", dash_c[] = "-c";
        char *argv[] = { sh, dash_c, spec->command, NULL };
        execve("/bin/sh", argv, x->env);
        report(report_fd, negative_errno(), "execute /bin/sh");
}


/* Where the child's user namespace comes from: none (root's jobs), a
 * member's it joins, or a new one (made as said). */
static SandboxUserNamespace userns_of(const ExecChild *x, SandboxUserNamespace made) {
        return !x->user_namespace ? SANDBOX_USERNS_NONE : x->network ? SANDBOX_USERNS_JOIN : made;
}

/* Whether the child is born in a new user namespace. */
static bool born_in_new_userns(const ExecChild *x) {
        return userns_of(x, SANDBOX_USERNS_MADE) == SANDBOX_USERNS_MADE;
}

typedef struct ChildStart {
        const ExecChild *x;
        int report_fd;
} ChildStart;

static int child_main(void *userdata) {
        const ChildStart *c = userdata;
        exec_child(c->x, userns_of(c->x, SANDBOX_USERNS_MADE), false, c->report_fd);
}

/* A child of its own memory, which may make its user namespace itself. */
static pid_t fork_child(const ExecChild *x, int report_fd) {
        pid_t pid = fork();
        if (pid == 0)
                exec_child(x, userns_of(x, SANDBOX_USERNS_MAKE), false, report_fd);
        return pid;
}

/* Born in the containment's cgroup (clone3 with CLONE_INTO_CGROUP), with
 * its user namespace where it needs one: no move into it, which takes the
 * kernel's cgroup write lock and, unless another move just did, waits for
 * an RCU grace period (measured 6–23 ms, against about 0.5 ms for this
 * child's copy of our page tables: clone3 shares our memory only with a
 * stack of its own and code to start on it, which libc does not offer).
 * -1 with errno where clone3 or the birth is refused (kernels before 5.7). */
static pid_t clone_inside(const ExecChild *x, int cgroup_fd, int report_fd) {
        struct clone_args args = {
                .flags = CLONE_INTO_CGROUP | (born_in_new_userns(x) ? CLONE_NEWUSER : 0),
                .exit_signal = SIGCHLD,
                .cgroup = (uint64_t) cgroup_fd,
        };
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof args);
        if (pid == 0)
                exec_child(x, userns_of(x, SANDBOX_USERNS_MADE), true, report_fd);
        return pid;
}

/* vfork-style: the child borrows our memory until it execs, and we wait
 * meanwhile, so nothing of ours is copied (a fork copied the page tables
 * and then faulted on every page either side wrote: about a millisecond
 * here). The child only makes system calls and writes to its own stack
 * (the rule above exec_child()). Not under AddressSanitizer, whose per-thread state the child would
 * share: a plain fork there. */
static pid_t start_child(const ExecChild *x, int report_fd) {
        int cgroup_fd = x->containment->ops->birth_cgroup(x->containment);
        if (cgroup_fd >= 0) {
                pid_t pid = clone_inside(x, cgroup_fd, report_fd);
                /* Else as below: moved in by enter(), or refused there. */
                if (pid >= 0)
                        return pid;
        }
        /* A sandboxed job's child waits for us once (its listener): it
         * cannot be one we wait for. */
        if (!EXEC_CHILD_SHARES_MEMORY || x->sockets)
                return fork_child(x, report_fd);
        const size_t stack_size = 256 * 1024;
        void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return -1;
        ChildStart c = { .x = x, .report_fd = report_fd };
        /* A child that shares our memory cannot unshare a user namespace
         * (the kernel refuses it to a process whose memory is shared): it
         * is made with the child. Where that is not allowed (no user
         * namespaces here), a child of its own memory tries, and fails
         * telling why: its sandbox is refused, never dropped. */
        pid_t pid = clone(child_main, (char *) stack + stack_size,
                          CLONE_VM | CLONE_VFORK | SIGCHLD | (born_in_new_userns(x) ? CLONE_NEWUSER : 0), &c);
        int saved = errno;
        (void) munmap(stack, stack_size);
        if (pid < 0 && born_in_new_userns(x))
                return fork_child(x, report_fd);
        errno = saved;
        return pid;
}

int exec_child_fork(const ExecChild *x, pid_t *ret_pid, int *ret_report_fd, const char **ret_step) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
                *ret_step = "pipe";
                return negative_errno();
        }
        _cleanup_close_ int read_fd = p[0], write_fd = p[1];

        pid_t pid = start_child(x, write_fd);
        if (pid < 0) {
                *ret_step = "fork";
                return negative_errno();
        }
        *ret_pid = pid;
        *ret_report_fd = TAKE_FD(read_fd);
        return 0;
}

int exec_child_wait(int report_fd, ExecFailure *ret) {
        ExecFailure f;
        ssize_t n;
        do
                n = read(report_fd, &f, sizeof f);
        while (n < 0 && errno == EINTR);
        /* Anything but a whole report means the pipe closed on exec. */
        if (n != (ssize_t) sizeof f)
                return 0;
        *ret = f;
        return 1;
}
