/* SPDX-License-Identifier: MIT */
/* bgrun-proxy: a job's HTTP(S) proxy, started by its supervisor as the
 * job's user, in its cgroup: a listening socket made inside the job's
 * network namespace (fd 3), the pipe for refused hosts (fd 4), the job's
 * AllowedDomains as arguments. It confines itself, says "R" on fd 4, and
 * serves until its supervisor kills it with the job. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <signal.h>
#include <unistd.h>

#include "confine.h"
#include "domain-list.h"
#include "log.h"
#include "proxy.h"

#define LISTEN_FD 3
#define REPORT_FD 4

int main(int argc, char **argv) {
        log_setup("bgrun-proxy", LOG_TARGET_CONSOLE);
        if (argc < 2 || argc - 1 > DOMAIN_LIST_MAX) {
                log_error("usage: bgrun-proxy ALLOWED-DOMAIN... (fd 3: its listening socket, fd 4: its report pipe)");
                return 2;
        }
        for (int i = 1; i < argc; i++)
                if (!domain_entry_valid(argv[i])) {
                        log_error("Not an AllowedDomains entry: '%.64s'", argv[i]);
                        return 2;
                }
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        signal(SIGPIPE, SIG_IGN);
        /* Six descriptors a connection at most (its sockets and two relays'
         * pipes): room for all of them where the hard limit allows; past
         * it, a connection copies instead of splicing. */
        struct rlimit nofile;
        if (getrlimit(RLIMIT_NOFILE, &nofile) >= 0 && nofile.rlim_cur < PROXY_NOFILE) {
                nofile.rlim_cur = nofile.rlim_max < PROXY_NOFILE ? nofile.rlim_max : PROXY_NOFILE;
                (void) setrlimit(RLIMIT_NOFILE, &nofile);
        }
        if (fcntl(LISTEN_FD, F_SETFL, O_NONBLOCK) < 0 || fcntl(REPORT_FD, F_SETFL, O_NONBLOCK) < 0 ||
            fcntl(LISTEN_FD, F_SETFD, FD_CLOEXEC) < 0 || fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC) < 0)
                return log_error_errno(negative_errno(), "Not started with its sockets: %m"), 1;
        int r = proxy_confine();
        if (r < 0)
                return log_error_errno(r, "Cannot confine itself: %m"), 1;
        if (write(REPORT_FD, "R\n", 2) != 2)
                return 1;
        Proxy p = { .listen_fd = LISTEN_FD, .report_fd = REPORT_FD, .allowed = argv + 1 };
        r = proxy_run(&p);
        log_error_errno(r, "Stopped: %m");
        return 1;
}
