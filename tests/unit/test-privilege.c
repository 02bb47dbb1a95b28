/* SPDX-License-Identifier: MIT */
/* drop_privileges() not as root (bgrund --user's supervisor): nothing to
 * change but capabilities, and no way to become anyone else. Each test runs
 * in its own process, which may leave root for good. */
#include <criterion/criterion.h>
#include <errno.h>
#include <grp.h>
#include <sys/capability.h>
#include <sys/prctl.h>
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
