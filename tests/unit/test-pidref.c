/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "pidref.h"

#define BOOT "0123456789abcdef0123456789abcdef"
#define OTHER_BOOT "fedcba9876543210fedcba9876543210"

/* pidfd_open() is missing on old kernels, and valgrind does not know it. */
static void require_pidfd(void) {
        int fd = pidfd_open(getpid(), 0);

        if (fd < 0 && errno == ENOSYS)
                cr_skip_test("no pidfd_open()");
        cr_assert_geq(fd, 0);
        close(fd);
}

/* A child that sleeps until killed, and dies with the test if the test
 * fails before killing it. */
static pid_t spawn_sleeper(const char *comm) {
        pid_t parent = getpid();
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(1);
                if (comm)
                        (void) prctl(PR_SET_NAME, comm);
                for (;;)
                        pause();
        }
        return pid;
}

static pid_t spawn_and_reap(void) {
        pid_t pid = fork();
        int status;

        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(0);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return pid;
}

/* Split a token into its parts; returns the number of parts (2 or 3). */
static int split_token(const char *t, char boot[static 33], uint64_t *start, uint64_t *ino) {
        int n = 0, consumed = 0;

        cr_assert_eq(strspn(t, "0123456789abcdef"), 32, "boot id part of \"%s\"", t);
        memcpy(boot, t, 32);
        boot[32] = '\0';
        cr_assert_eq(t[32], '-', "token \"%s\"", t);

        if (sscanf(t + 33, "%" SCNu64 "-%" SCNu64 "%n", start, ino, &consumed) == 2 && t[33 + consumed] == '\0')
                n = 3;
        else if (sscanf(t + 33, "%" SCNu64 "%n", start, &consumed) == 1 && t[33 + consumed] == '\0')
                n = 2;
        cr_assert_neq(n, 0, "malformed token \"%s\"", t);
        return n;
}

static bool pidfd_is_pidfs(int fd) {
        struct statfs sfs;

        cr_assert_eq(fstatfs(fd, &sfs), 0);
        return sfs.f_type == 0x50494446;
}

Test(pidref, lifecycle_kill_and_gone) {
        PidRef ref = PIDREF_NULL, again = PIDREF_NULL;
        pid_t pid;
        int status, r;

        require_pidfd();
        pid = spawn_sleeper(NULL);

        r = pidref_set_pid(&ref, pid);
        cr_assert_eq(r, 0);
        cr_assert_eq(ref.pid, pid);
        cr_assert_geq(ref.fd, 0);
        cr_assert_gt(strlen(ref.token), 33);

        cr_assert_eq(pidref_check(&ref), PIDREF_OWNED);
        cr_assert_eq(pidref_verify(pid, ref.token, &again), PIDREF_OWNED);
        cr_assert_eq(again.pid, pid);
        cr_assert_geq(again.fd, 0);
        cr_assert(pidref_tokens_match(again.token, ref.token));
        pidref_done(&again);

        cr_assert_eq(pidref_kill(&ref, SIGTERM), 0);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status), "child was not killed by a signal");
        cr_assert_eq(WTERMSIG(status), SIGTERM);

        cr_assert_eq(pidref_check(&ref), PIDREF_GONE);
        cr_assert_eq(pidref_verify(pid, ref.token, NULL), PIDREF_GONE);

        /* A signal for a process that is gone must fail, not hit a
         * successor of the pid. */
        cr_assert_eq(pidref_kill(&ref, SIGTERM), -ESRCH);

        pidref_done(&ref);
        cr_assert_eq(ref.fd, -EBADF);
        cr_assert_eq(ref.pid, 0);
        cr_assert_str_eq(ref.token, "");
}

Test(pidref, zombie_is_gone_for_check) {
        PidRef ref = PIDREF_NULL;
        pid_t pid;
        siginfo_t si = {};

        require_pidfd();
        pid = spawn_sleeper(NULL);

        cr_assert_eq(pidref_set_pid(&ref, pid), 0);
        cr_assert_eq(pidref_kill(&ref, SIGKILL), 0);

        /* Wait for the exit but leave the zombie in place. */
        cr_assert_eq(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT), 0);
        cr_assert_eq(si.si_pid, pid);
        cr_assert_eq(pidref_check(&ref), PIDREF_GONE);

        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        pidref_done(&ref);
}

Test(pidref, mismatched_token_is_foreign) {
        PidRef ref = PIDREF_NULL, out = PIDREF_NULL;
        pid_t pid;
        char boot[33], forged[PIDREF_TOKEN_MAX];
        uint64_t start, ino;
        int n;

        require_pidfd();
        pid = spawn_sleeper(NULL);

        cr_assert_eq(pidref_set_pid(&ref, pid), 0);
        n = split_token(ref.token, boot, &start, &ino);

        /* Same pid, another start time: the pid was reused. */
        snprintf(forged, sizeof(forged), "%s-%" PRIu64, boot, start + 1);
        cr_assert_eq(pidref_verify(pid, forged, &out), PIDREF_FOREIGN);
        cr_assert_eq(out.fd, -EBADF, "ret written for a foreign process");
        cr_assert_eq(out.pid, 0);

        /* Same start time, previous boot. */
        snprintf(forged, sizeof(forged), "%s-%" PRIu64, OTHER_BOOT, start);
        cr_assert_eq(pidref_verify(pid, forged, NULL), PIDREF_FOREIGN);

        /* Without the inode the token still names the process... */
        snprintf(forged, sizeof(forged), "%s-%" PRIu64, boot, start);
        cr_assert_eq(pidref_verify(pid, forged, NULL), PIDREF_OWNED);

        /* ...but a different inode does not. */
        if (n == 3) {
                snprintf(forged, sizeof(forged), "%s-%" PRIu64 "-%" PRIu64, boot, start, ino + 1);
                cr_assert_eq(pidref_verify(pid, forged, NULL), PIDREF_FOREIGN);
        }

        cr_assert_eq(pidref_kill(&ref, SIGKILL), 0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        pidref_done(&ref);
}

Test(pidref, set_pid_of_exited_process) {
        PidRef ref = PIDREF_NULL;
        pid_t pid;

        require_pidfd();
        pid = spawn_and_reap();

        cr_assert_eq(pidref_set_pid(&ref, pid), -ESRCH);
        cr_assert_eq(ref.fd, -EBADF, "ref written on failure");
        cr_assert_eq(pidref_verify(pid, BOOT "-1", NULL), PIDREF_GONE);
}

Test(pidref, invalid_arguments) {
        PidRef ref = PIDREF_NULL;

        cr_assert_eq(pidref_set_pid(&ref, 0), -EINVAL);
        cr_assert_eq(pidref_set_pid(&ref, -1), -EINVAL);
        cr_assert_eq(pidref_set_pid(NULL, getpid()), -EINVAL);
        cr_assert_eq(pidref_verify(getpid(), NULL, NULL), -EINVAL);
        cr_assert_eq(pidref_verify(0, BOOT "-1", NULL), -EINVAL);
}

Test(pidref, null_ref_refuses) {
        PidRef ref = PIDREF_NULL;

        cr_assert_eq(pidref_kill(&ref, SIGTERM), -EBADF);
        cr_assert_eq(pidref_kill(&ref, 0), -EBADF);
        cr_assert_eq(pidref_kill(NULL, SIGTERM), -EBADF);
        cr_assert_eq(pidref_check(&ref), -EBADF);

        /* pid set but no pidfd: still no signal (no kill(2) fallback). */
        ref.pid = getpid();
        cr_assert_eq(pidref_kill(&ref, SIGKILL), -EBADF);

        pidref_done(&ref);
        pidref_done(NULL);
        cr_assert_eq(ref.fd, -EBADF);
}

Test(pidref, token_of_self) {
        char token[PIDREF_TOKEN_MAX], boot[33], expect_boot[33] = {}, line[64] = {};
        uint64_t start, ino;
        struct stat st;
        FILE *f;
        int fd, n;

        require_pidfd();

        cr_assert_eq(process_start_token(getpid(), -EBADF, token, sizeof(token)), 0);
        cr_assert_eq(split_token(token, boot, &start, &ino), 2, "inode without a pidfd: \"%s\"", token);

        f = fopen("/proc/sys/kernel/random/boot_id", "re");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(line, sizeof(line), f));
        fclose(f);
        for (size_t i = 0, j = 0; line[i] && line[i] != '\n'; i++)
                if (line[i] != '-')
                        expect_boot[j++] = line[i];
        cr_assert_str_eq(boot, expect_boot);

        fd = pidfd_open(getpid(), 0);
        cr_assert_geq(fd, 0);
        cr_assert_eq(process_start_token(getpid(), fd, token, sizeof(token)), 0);
        n = split_token(token, boot, &start, &ino);
        if (pidfd_is_pidfs(fd)) {
                cr_assert_eq(n, 3, "pidfs inode missing: \"%s\"", token);
                cr_assert_eq(fstat(fd, &st), 0);
                cr_assert_eq(ino, (uint64_t) st.st_ino);
        } else
                cr_assert_eq(n, 2, "anon-inode number in token: \"%s\"", token);
        close(fd);

        cr_assert_eq(process_start_token(getpid(), -EBADF, token, 10), -ENOBUFS);
        cr_assert_eq(process_start_token(0, -EBADF, token, sizeof(token)), -EINVAL);
}

Test(pidref, comm_with_parenthesis_and_spaces) {
        /* A naive parser that stops at the first ')' would read fields
         * of the name as stat fields and get a small, wrong start time. */
        PidRef ref = PIDREF_NULL;
        pid_t pid;
        char boot[33], path[64], comm[64] = {};
        uint64_t start, ino;
        double uptime;
        long hz = sysconf(_SC_CLK_TCK);
        FILE *f;

        require_pidfd();
        pid = spawn_sleeper("x) 1 2 3 4 5 6");

        /* Make sure the child has renamed itself before we look. */
        snprintf(path, sizeof(path), "/proc/%d/comm", (int) pid);
        for (unsigned i = 0; i < 1000 && !streq(comm, "x) 1 2 3 4 5 6\n"); i++) {
                f = fopen(path, "re");
                cr_assert_not_null(f);
                if (!fgets(comm, sizeof(comm), f))
                        comm[0] = '\0';
                fclose(f);
                usleep(1000);
        }
        cr_assert_str_eq(comm, "x) 1 2 3 4 5 6\n");

        cr_assert_eq(pidref_set_pid(&ref, pid), 0);
        split_token(ref.token, boot, &start, &ino);

        f = fopen("/proc/uptime", "re");
        cr_assert_not_null(f);
        cr_assert_eq(fscanf(f, "%lf", &uptime), 1);
        fclose(f);

        /* The child started moments ago. */
        cr_assert_leq(start, (uint64_t) (uptime * hz) + 1);
        cr_assert_geq(start + 10 * (uint64_t) hz, (uint64_t) (uptime * hz),
                      "start time %" PRIu64 " is not near uptime %.2fs", start, uptime);
        cr_assert_eq(pidref_verify(pid, ref.token, NULL), PIDREF_OWNED);

        cr_assert_eq(pidref_kill(&ref, SIGKILL), 0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        pidref_done(&ref);
}

Test(pidref, tokens_match) {
        static const struct {
                const char *a, *b;
                bool match;
        } cases[] = {
                { BOOT "-100",       BOOT "-100",       true },
                { BOOT "-100-7",     BOOT "-100-7",     true },
                { BOOT "-100-7",     BOOT "-100",       true },  /* one without inode */
                { BOOT "-100",       BOOT "-100-7",     true },
                { BOOT "-100-7",     BOOT "-100-8",     false }, /* inode differs */
                { BOOT "-100",       BOOT "-101",       false }, /* start differs */
                { BOOT "-100",       OTHER_BOOT "-100", false }, /* boot differs */
                { BOOT "-100",       BOOT "-1000",      false },
                { BOOT "-100",       "",                false },
                { "",                "",                false }, /* garbage never matches */
                { "garbage",         "garbage",         false },
                { BOOT "-",          BOOT "-",          false },
                { BOOT "-x",         BOOT "-x",         false },
                { BOOT "-100-",      BOOT "-100-",      false },
                { BOOT "-100-7-9",   BOOT "-100-7-9",   false },
                { "0123456789ABCDEF0123456789ABCDEF-1", "0123456789ABCDEF0123456789ABCDEF-1", false },
                { "0123456789abcdef-1", "0123456789abcdef-1", false }, /* short boot id */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_assert_eq(pidref_tokens_match(cases[i].a, cases[i].b), cases[i].match,
                             "match(\"%s\", \"%s\") should be %d", cases[i].a, cases[i].b, cases[i].match);

        cr_assert_not(pidref_tokens_match(NULL, BOOT "-1"));
        cr_assert_not(pidref_tokens_match(BOOT "-1", NULL));
}

/* The pid a pidfd refers to, until it is reaped. */
Test(pidref, pid_of_a_pidfd) {
        require_pidfd();
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                pause();
                _exit(0);
        }
        int fd = pidfd_open(pid, 0);
        cr_assert_geq(fd, 0);
        pid_t got = 0;
        cr_assert_eq(pidfd_get_pid(fd, &got), 0);
        cr_assert_eq(got, pid);
        cr_assert_eq(kill(pid, SIGKILL), 0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_assert_eq(pidfd_get_pid(fd, &got), -ESRCH);
        close(fd);
        cr_assert_lt(pidfd_get_pid(-1, &got), 0);
}
