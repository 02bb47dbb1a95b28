/* SPDX-License-Identifier: MIT */
/* Why bgrund cannot start, found while a call waits for it: the service
 * manager's view of bgrund.service, and bgrund --check-config's reason. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build-config.h"

#include "bgrun/bus-api.h"
#include "daemon-check.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "reach.h"
#include "time-util.h"

/* Whether bgrund is there, asked of the bus with the first call: only
 * while a call is unanswered and bgrund was not there does the wait ask the
 * service manager how bgrund.service is doing. */
static struct {
        bool missing;            /* nobody owned the name: the first call starts bgrund */
        bool reported;           /* why it cannot start was said: nothing more to say */
        bool reason_known;
        char *reason;            /* bgrund --check-config's reason, if it gives one */
        uint64_t since;          /* when bgrund.service last changed state, before this start */
        uint64_t started;        /* when the name was found missing */
        uint64_t next_check;     /* 0: not looked at yet */
        char said[1024];         /* what was said, for --json's error */
} daemon_check;

/* bgrund beside this bgrun: the supervisor's directory (libexecdir). */
static char *bgrund_path(void) {
        const char *slash = strrchr(BGRUN_SUPERVISOR_PATH, '/');
        char *p;

        if (!slash)
                return NULL;
        if (asprintf(&p, "%.*s/bgrund", (int) (slash - BGRUN_SUPERVISOR_PATH), BGRUN_SUPERVISOR_PATH) < 0)
                return NULL;
        return p;
}

/* Runs bgrund --check-config (bounded in time) and returns its reason for
 * refusing to start, if it gives one; NULL if the configuration loads, or
 * bgrund cannot be run here. */
static char *check_config_reason(bool user) {
        _cleanup_free_ char *path = bgrund_path();
        _cleanup_close_ int read_fd = -EBADF;
        int pipe_fds[2];
        char buf[4096];
        size_t n = 0;
        uint64_t deadline;
        const char *reason;
        pid_t pid;
        int status;

        if (!path || access(path, X_OK) < 0 || pipe2(pipe_fds, O_CLOEXEC) < 0)
                return NULL;
        read_fd = pipe_fds[0];

        pid = fork();
        if (pid < 0) {
                safe_close(pipe_fds[1]);
                return NULL;
        }
        if (pid == 0) {
                sigset_t none;
                int null = open("/dev/null", O_RDWR | O_CLOEXEC);

                sigemptyset(&none);
                (void) sigprocmask(SIG_SETMASK, &none, NULL);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(pipe_fds[1], STDOUT_FILENO) < 0 ||
                    dup2(pipe_fds[1], STDERR_FILENO) < 0)
                        _exit(127);
                if (user)
                        execl(path, "bgrund", "--user", "--check-config", NULL);
                else
                        execl(path, "bgrund", "--check-config", NULL);
                _exit(127);
        }
        safe_close(pipe_fds[1]);

        deadline = now_monotonic_usec() + 3 * USEC_PER_SEC;
        for (;;) {
                struct pollfd p = { .fd = read_fd, .events = POLLIN };
                uint64_t now = now_monotonic_usec();
                ssize_t k;

                if (now >= deadline || poll(&p, 1, (int) ((deadline - now) / USEC_PER_MSEC) + 1) <= 0)
                        break;
                k = read(read_fd, buf + n, sizeof buf - 1 - n);
                if (k <= 0)
                        break;
                n += (size_t) k;
                if (n >= sizeof buf - 1)
                        break;
        }
        buf[n] = '\0';
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, &status, 0);

        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return NULL;
        reason = strstr(buf, "Refusing to start: ");
        if (!reason)
                return NULL;
        reason += strlen("Refusing to start: ");
        return strndup(reason, strcspn(reason, "\n"));
}

#define BGRUND_UNIT_PATH "/org/freedesktop/systemd1/unit/bgrund_2eservice"
/* A failed bgrund.service that does not even begin to start this long after
 * the call that should start it is not going to. */
#define STALE_FAILURE_USEC (2 * USEC_PER_SEC)

/* When bgrund.service last changed state (CLOCK_MONOTONIC µs), 0 if the
 * service manager cannot tell. */
static uint64_t bgrund_unit_changed_at(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uint64_t t = 0;

        if (sd_bus_get_property(bus, "org.freedesktop.systemd1", BGRUND_UNIT_PATH, "org.freedesktop.systemd1.Unit",
                                "StateChangeTimestampMonotonic", NULL, &reply, "t") < 0 ||
            sd_bus_message_read(reply, "t", &t) < 0)
                return 0;
        return t;
}

typedef enum UnitHealth {
        UNIT_FINE,           /* starting, running, or the manager cannot tell */
        UNIT_RESTARTING,     /* failed, and will be started again */
        UNIT_FAILED,         /* failed, and stays so */
} UnitHealth;

/* How bgrund.service is doing, asked of the service manager on this bus. */
static UnitHealth bgrund_unit_health(sd_bus *bus) {
        _cleanup_free_ char *active = NULL, *sub = NULL;

        if (sd_bus_get_property_string(bus, "org.freedesktop.systemd1", BGRUND_UNIT_PATH,
                                       "org.freedesktop.systemd1.Unit", "ActiveState", NULL, &active) < 0 ||
            sd_bus_get_property_string(bus, "org.freedesktop.systemd1", BGRUND_UNIT_PATH,
                                       "org.freedesktop.systemd1.Unit", "SubState", NULL, &sub) < 0)
                return UNIT_FINE;
        if (streq(active, "failed"))
                return UNIT_FAILED;
        if (streq(sub, "auto-restart"))
                return UNIT_RESTARTING;
        return UNIT_FINE;
}

static void log_cannot_start(const char *reason, bool stale) {
        bool user = bus_reached(NULL) == REACHED_USER_BUS;
        const char *u = user ? " --user" : "";

        char *s = daemon_check.said;
        size_t n = sizeof daemon_check.said;
        if (reason)
                snprintf(s, n, "bgrund cannot start: %s (check with: bgrund%s --check-config; see: journalctl%s -u bgrund)",
                         reason, u, u);
        else if (stale)
                snprintf(s, n, "bgrund.service failed before and is not started again (start it with: systemctl%s "
                         "restart bgrund.service; see: journalctl%s -u bgrund)", u, u);
        else
                /* Failed just now: after too many tries systemd will not
                 * start it again by itself, so say how to. */
                snprintf(s, n, "bgrund failed to start (see: journalctl%s -u bgrund; check the configuration with: "
                         "bgrund%s --check-config; then start it with: systemctl%s restart bgrund.service)",
                         u, u, u);
        log_error("%s", s);
}

static int on_name_has_owner(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        int has_owner = 0;

        if (sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "b", &has_owner) < 0 || has_owner)
                return 0; /* there, or we cannot tell: the call itself will say */
        daemon_check.missing = true;
        daemon_check.started = now_monotonic_usec();
        return 0;
}

/* A floating slot: the bus owns it, and the answer may never be read. */
int daemon_check_start(sd_bus *bus) {
        return sd_bus_call_method_async(bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus", "NameHasOwner", on_name_has_owner, NULL, "s",
                                        BGRUN_BUS_NAME);
}

static int daemon_cannot_start(const char *reason, bool stale) {
        log_cannot_start(reason, stale);
        daemon_check.reported = true;
        return -ENOTCONN;
}

/* One look at bgrund.service while a call waits for a bgrund that was not
 * there: -ENOTCONN once it is known not to come (and said), else 0. */
int daemon_check_step(sd_bus *bus) {
        uint64_t now = now_monotonic_usec();
        UnitHealth health;

        if (now < daemon_check.next_check)
                return 0;
        /* Read once the name was found missing, which is after the first
         * call went out: a start that failed in that moment is taken for
         * an old failure, and said 2 s later. */
        if (daemon_check.next_check == 0)
                daemon_check.since = bgrund_unit_changed_at(bus);
        daemon_check.next_check = now + 250 * USEC_PER_MSEC;

        health = bgrund_unit_health(bus);
        if (health != UNIT_FINE && !daemon_check.reason_known) {
                daemon_check.reason = check_config_reason(bus_reached(NULL) == REACHED_USER_BUS);
                daemon_check.reason_known = true;
        }
        /* The configuration says why: said at once. */
        if (health != UNIT_FINE && daemon_check.reason)
                return daemon_cannot_start(daemon_check.reason, false);
        if (health == UNIT_FAILED) {
                /* Failed since our call: this start failed. */
                if (bgrund_unit_changed_at(bus) > daemon_check.since)
                        return daemon_cannot_start(NULL, false);
                /* Failed before, and still, though asked to start (the bus
                 * daemon waits for an activation that does not come): say
                 * so rather than wait for its timeout. */
                if (now - daemon_check.started >= STALE_FAILURE_USEC)
                        return daemon_cannot_start(NULL, true);
        }
        return 0;
}

/* A call answered that bgrund is missing, while it was not there before:
 * if its configuration says why, that is the line to print. */
int daemon_check_failed_call(const sd_bus_error *error) {
        if (!daemon_check.missing || !bus_error_means_daemon_missing(error))
                return 0;
        if (!daemon_check.reason_known) {
                daemon_check.reason = check_config_reason(bus_reached(NULL) == REACHED_USER_BUS);
                daemon_check.reason_known = true;
        }
        return daemon_check.reason ? daemon_cannot_start(daemon_check.reason, false) : 0;
}

bool daemon_check_waiting(void) {
        return daemon_check.missing;
}

void daemon_check_answered(const sd_bus_error *error) {
        /* bgrund answered: nothing more to watch for. */
        if (!bus_error_means_daemon_missing(error))
                daemon_check.missing = false;
}

bool daemon_check_reported(void) {
        return daemon_check.reported;
}

const char *daemon_check_said(void) {
        return daemon_check.reported ? daemon_check.said : NULL;
}
