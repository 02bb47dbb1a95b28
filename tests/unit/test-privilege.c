/* SPDX-License-Identifier: MIT */
/* drop_privileges(): not as root (bgrund --user's supervisor), nothing to
 * change but capabilities, and no way to become anyone else; as root, the
 * owner's identity and no capability in any set. Each test runs in its own
 * process, which may leave root for good. */
#include <criterion/criterion.h>
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "privilege.h"

#define NOBODY 65534

/* An ordinary user: root becomes nobody first. */
static uid_t become_ordinary(void) {
        if (geteuid() == 0) {
                gid_t g = NOBODY;
                cr_assert_eq(setgroups(1, &g), 0);
                cr_assert_eq(setresgid(NOBODY, NOBODY, NOBODY), 0);
                cr_assert_eq(setresuid(NOBODY, NOBODY, NOBODY), 0);
        }
        return geteuid();
}

Test(privilege, not_root_keeps_its_identity_and_drops_every_capability) {
        uid_t uid = become_ordinary();
        gid_t gid = getegid();
        gid_t groups[] = { gid };
        cr_assert_eq(drop_privileges(uid, gid, groups, 1), 0);
        cr_assert_eq(geteuid(), uid);
        cr_assert_eq(getuid(), uid);
        cr_assert_eq(getegid(), gid);
        cr_assert_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 1, "no_new_privs");
        cap_t caps = cap_get_proc(), empty = cap_init();
        cr_assert(caps && empty);
        cr_assert_eq(cap_compare(caps, empty), 0, "effective, permitted and inheritable sets empty");
        cap_free(caps);
        cap_free(empty);
        for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
                cr_assert_neq(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0), 1, "ambient capability %d", cap);
}

Test(privilege, not_root_cannot_become_someone_else) {
        uid_t uid = become_ordinary();
        gid_t gid = getegid();
        gid_t groups[] = { gid };
        cr_assert_eq(drop_privileges(0, 0, groups, 1), -EPERM);
        cr_assert_eq(drop_privileges(uid + 1, gid, groups, 1), -EPERM);
        cr_assert_eq(geteuid(), uid, "unchanged");
}

/* As root, in a forked child as the supervisor's exec child calls it: every
 * capability set empty, the bounding set included, and the given identity.
 * Read from /proc/self/status, the kernel's own account. The child reports
 * by exit status (the line of the check that failed): Criterion's
 * assertions belong to the test's own process. */
static uint64_t status_caps(const char *field) {
        FILE *f = fopen("/proc/self/status", "re");
        if (!f)
                return UINT64_MAX;
        char line[256];
        size_t n = strlen(field);
        uint64_t v = UINT64_MAX;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, field, n) == 0 && line[n] == ':')
                        v = strtoull(line + n + 1, NULL, 16);
        fclose(f);
        return v;
}

#define CHECK(x)                                  \
        do {                                      \
                if (!(x))                         \
                        _exit(__LINE__ % 256 ?: 1); \
        } while (0)

static void check_dropped(uid_t uid, gid_t gid) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                gid_t groups[] = { gid };
                /* An ambient capability to clear, as a parent may leave one
                 * (it must be inheritable first). */
                cap_t c = cap_get_proc();
                cap_value_t raw = CAP_NET_RAW;
                CHECK(c && cap_set_flag(c, CAP_INHERITABLE, 1, &raw, CAP_SET) == 0 && cap_set_proc(c) == 0);
                cap_free(c);
                CHECK(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_RAW, 0, 0) == 0);
                CHECK(status_caps("CapAmb") != 0 && status_caps("CapAmb") != UINT64_MAX);

                CHECK(drop_privileges(uid, gid, groups, 1) == 0);
                CHECK(getuid() == uid && geteuid() == uid);
                CHECK(getgid() == gid && getegid() == gid);
                gid_t got[8];
                CHECK(getgroups(8, got) == 1 && got[0] == gid);
                CHECK(status_caps("CapEff") == 0);
                CHECK(status_caps("CapPrm") == 0);
                CHECK(status_caps("CapInh") == 0);
                CHECK(status_caps("CapAmb") == 0);
                CHECK(status_caps("CapBnd") == 0);
                CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
                _exit(0);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "the child died (status %d)", status);
        cr_assert_eq(WEXITSTATUS(status), 0, "the check at line %d (mod 256) failed", WEXITSTATUS(status));
}

Test(privilege, root_becomes_the_user_with_no_capability_in_any_set) {
        if (geteuid() != 0)
                cr_skip_test("changing identity needs root");
        check_dropped(NOBODY, NOBODY);
}

Test(privilege, root_staying_root_keeps_no_capability_either) {
        if (geteuid() != 0)
                cr_skip_test("dropping the bounding set needs root");
        check_dropped(0, 0);
}
