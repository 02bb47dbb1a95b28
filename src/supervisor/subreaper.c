/* SPDX-License-Identifier: MIT */
#include <sys/prctl.h>
#include <sys/wait.h>

#include "macro.h"
#include "subreaper.h"

int subreaper_enable(void) {
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}

void subreaper_reap_orphans(pid_t keep) {
        for (;;) {
                siginfo_t si = {};
                if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
                        return;
                if (si.si_pid == keep)
                        return;
                (void) waitpid(si.si_pid, NULL, 0);
        }
}
