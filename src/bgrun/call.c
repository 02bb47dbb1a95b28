/* SPDX-License-Identifier: MIT */
/* The connection to bgrund and the calls on its Manager, each failure told
 * in one line that says what the user can do about it. */

#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "build-config.h"

#include "bgrun/bus-api.h"
#include "bus-json.h"
#include "fileio.h"
#include "job-id.h"
#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "record.h"
#include "time-util.h"

/* What dbus-daemon answers when activating a service took too long. */
#define DBUS_ERROR_TIMED_OUT "org.freedesktop.DBus.Error.TimedOut"

/* Margin on top of a server-side wait, so the reply has time to arrive. */
#define CALL_MARGIN_USEC (25 * USEC_PER_SEC)

static bool bus_error_means_daemon_missing(const sd_bus_error *error) {
        if (!sd_bus_error_is_set(error))
                return false;

        /* Nobody owns the name and activation is not set up, failed, or timed
         * out (only the bus daemon sends TimedOut; bgrund itself never does). */
        return sd_bus_error_has_names(error,
                                      SD_BUS_ERROR_SERVICE_UNKNOWN,
                                      SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                      DBUS_ERROR_TIMED_OUT) ||
                startswith_s(error->name, "org.freedesktop.DBus.Error.Spawn.");
}

static const char *bus_error_text(const sd_bus_error *error, int r) {
        if (sd_bus_error_is_set(error) && error->message && error->message[0])
                return error->message;
        return strerror(r < 0 ? -r : r);
}

/* bgrund's texts of BGRUN_ERROR_ACCESS_DENIED begin with "Request
 * authority denied: ", sd-bus' own may say "Access denied": the reason
 * without the words the line begins with anyway. */
const char *access_denied_reason(const char *message) {
        static const char *const prefixes[] = { "Request authority denied: ", "Access denied: " };

        for (size_t i = 0; i < ELEMENTSOF(prefixes); i++)
                if (startswith_s(message, prefixes[i]))
                        return message + strlen(prefixes[i]);
        return message;
}

static bool errno_means_nobody_there(int r) {
        return r == -ENOENT || r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOTCONN || r == -ENOTDIR;
}

/* What bus_connect() reached, for the line that says bgrund is missing. */
static enum {
        REACHED_SYSTEM_BUS,
        REACHED_USER_BUS,
        REACHED_REMOTE,
        REACHED_BUS_ADDRESS,  /* a bus at an address given */
        REACHED_LISTEN,       /* a bgrund --listen socket, or nothing at all */
} reached = REACHED_SYSTEM_BUS;
static const char *reached_where = NULL; /* the host or the address */

/* Whether bgrund is there, asked of the bus with the first call (NameHasOwner,
 * sent with it, never awaited on its own): only while a call is unanswered
 * and bgrund was not there does the wait ask the service manager how
 * bgrund.service is doing, so that one that cannot start is said at once,
 * with the reason, rather than after the bus' activation timeout. Only on a
 * bus with a service manager (the system or the user bus). */
static struct {
        bool missing;            /* nobody owned the name: the first call starts bgrund */
        bool reported;           /* why it cannot start was said: nothing more to say */
        bool reason_known;
        char *reason;            /* bgrund --check-config's reason, if it gives one */
        uint64_t since;          /* when bgrund.service last changed state, before this start */
        uint64_t started;        /* when the name was found missing */
        uint64_t next_check;     /* 0: not looked at yet */
} daemon_check;

static void log_daemon_missing(void) {
        switch (reached) {
        case REACHED_SYSTEM_BUS:
                log_error("bgrund is not running (start it with: systemctl start bgrund.service)");
                break;
        case REACHED_USER_BUS:
                log_error("bgrund --user is not running (start it with: systemctl --user start bgrund.service)");
                break;
        case REACHED_REMOTE:
                log_error("bgrund is not running on %s (start it there with: systemctl start bgrund.service)",
                          reached_where);
                break;
        case REACHED_BUS_ADDRESS:
                log_error("bgrund is not on the bus at %s.", reached_where);
                break;
        case REACHED_LISTEN:
                log_error("bgrund is not running: no bus, and nothing listens on %s "
                          "(start bgrund --listen, or bgrund.service where there is a bus)", reached_where);
                break;
        }
}

int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r) {
        if (r >= 0)
                r = -EIO;

        /* Why bgrund cannot start was said instead. */
        if (daemon_check.reported)
                return r;

        if (bus_error_means_daemon_missing(error)) {
                log_daemon_missing();
                return r;
        }
        if ((!sd_bus_error_is_set(error) || startswith_s(error->name, "System.Error.")) &&
            errno_means_nobody_there(r)) {
                /* The connection itself went: a bgrund --listen that stopped,
                 * or ssh that could not reach the host. */
                if (reached == REACHED_REMOTE)
                        log_error("Could not reach bgrund on %s through ssh (%s): it takes ssh access to the host "
                                  "and systemd-stdio-bridge there.", reached_where, strerror(-r));
                else if (reached == REACHED_SYSTEM_BUS || reached == REACHED_USER_BUS)
                        log_error("Lost the connection to the bus during %s: %s", method, strerror(-r));
                else
                        log_error("Lost the connection to %s during %s: %s", reached_where, method, strerror(-r));
                return r;
        }

        if (sd_bus_error_has_name(error, BGRUN_ERROR_NO_SUCH_JOB)) {
                if (id && !job_id_is_valid(id))
                        /* Not one that could ever be found: say why. */
                        log_error("No job has the id \"%s\": a job id is %d characters of [a-z0-9].",
                                  id, JOB_ID_LEN);
                else if (id)
                        log_error("Job %s not found.", id);
                else
                        log_error("Job not found: %s", bus_error_text(error, r));
        } else if (sd_bus_error_has_names(error,
                                          BGRUN_ERROR_ACCESS_DENIED,
                                          SD_BUS_ERROR_ACCESS_DENIED,
                                          SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED))
                log_error("Access denied: %s", access_denied_reason(bus_error_text(error, r)));
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_CONTAINMENT_REFUSED))
                log_error("Containment refused, nothing was started: %s", bus_error_text(error, r));
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_JOB_NOT_FINISHED))
                log_error("Job %s is still running; kill it or wait for it first.", id ? id : "");
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_LIMIT_EXCEEDED))
                log_error("Limit exceeded, nothing was started: %s", bus_error_text(error, r));
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_NO_INPUT))
                log_error("Job %s takes no input (start it with --stdin or --tty), or its input was closed.",
                          id ? id : "");
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_INPUT_FULL))
                log_error("Job %s has 1 MiB of input it has not read yet; try again later.", id ? id : "");
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_INVALID_ARGS))
                log_error("Invalid argument: %s", bus_error_text(error, r));
        else if (sd_bus_error_has_name(error, SD_BUS_ERROR_NO_REPLY) || r == -ETIMEDOUT)
                log_error("bgrund did not answer %s in time.", method);
        else if (sd_bus_error_has_names(error, SD_BUS_ERROR_UNKNOWN_METHOD, SD_BUS_ERROR_UNKNOWN_OBJECT,
                                        SD_BUS_ERROR_UNKNOWN_INTERFACE))
                log_error("bgrund does not support %s (is it the same version as bgrun?): %s",
                          method, bus_error_text(error, r));
        else
                log_error("%s failed: %s", method, bus_error_text(error, r));

        return r;
}

static int bus_open_address(const char *address, bool bus_client, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_new(&bus);
        if (r < 0)
                return r;
        r = sd_bus_set_address(bus, address);
        if (r < 0)
                return r;
        r = sd_bus_set_bus_client(bus, bus_client);
        if (r < 0)
                return r;
        r = sd_bus_start(bus);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(bus);
        return 0;
}

/* Any address: a bus (which wants Hello first) or bgrund --listen (peer to
 * peer, which does not know Hello). Try a bus; if the peer turns Hello down,
 * it is bgrund itself. */
static int bus_open_any_address(const char *address, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *unique;
        int r;

        r = bus_open_address(address, true, &bus);
        if (r < 0)
                return r;

        r = sd_bus_get_unique_name(bus, &unique); /* waits for the answer to Hello */
        if (r >= 0) {
                reached = REACHED_BUS_ADDRESS;
                *ret = TAKE_PTR(bus);
                return 0;
        }
        if (errno_means_nobody_there(r))
                return r;

        log_debug_errno(r, "No bus at %s (Hello: %m), talking to bgrund directly.", address);
        bus = sd_bus_flush_close_unref(bus);
        reached = REACHED_LISTEN;
        return bus_open_address(address, false, ret);
}

/* Where bgrund --listen would be for target, with no bus to reach. */
static int listen_address(const BusTarget *target, char **ret) {
        const char *runtime_dir;

        if (target->transport != BUS_TRANSPORT_USER) {
                *ret = strdup(BGRUN_LISTEN_ADDRESS_SYSTEM);
                return *ret ? 0 : -ENOMEM;
        }

        runtime_dir = getenv("XDG_RUNTIME_DIR");
        if (!runtime_dir || runtime_dir[0] != '/')
                return -ENXIO;
        return asprintf(ret, "unix:path=%s/" BGRUN_LISTEN_SOCKET_USER, runtime_dir) < 0 ? -ENOMEM : 0;
}

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
        bool user = reached == REACHED_USER_BUS;
        const char *u = user ? " --user" : "";

        if (reason)
                log_error("bgrund cannot start: %s (check with: bgrund%s --check-config; see: journalctl%s -u bgrund)",
                          reason, u, u);
        else if (stale)
                log_error("bgrund.service failed before and is not started again (start it with: systemctl%s "
                          "restart bgrund.service; see: journalctl%s -u bgrund)", u, u);
        else
                /* Failed just now: after too many tries systemd will not
                 * start it again by itself, so say how to. */
                log_error("bgrund failed to start (see: journalctl%s -u bgrund; check the configuration with: "
                          "bgrund%s --check-config; then start it with: systemctl%s restart bgrund.service)",
                          u, u, u);
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
static int daemon_check_start(sd_bus *bus) {
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
static int daemon_check_step(sd_bus *bus) {
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
                daemon_check.reason = check_config_reason(reached == REACHED_USER_BUS);
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
static int daemon_check_failed_call(const sd_bus_error *error) {
        if (!daemon_check.missing || !bus_error_means_daemon_missing(error))
                return 0;
        if (!daemon_check.reason_known) {
                daemon_check.reason = check_config_reason(reached == REACHED_USER_BUS);
                daemon_check.reason_known = true;
        }
        return daemon_check.reason ? daemon_cannot_start(daemon_check.reason, false) : 0;
}

static int on_call_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        PendingCall *c = userdata;

        /* bgrund answered: nothing more to watch for. */
        if (!bus_error_means_daemon_missing(sd_bus_message_get_error(m)))
                daemon_check.missing = false;
        c->reply = sd_bus_message_ref(m);
        return 0;
}

int manager_call_send(sd_bus *bus, sd_bus_message *m, uint64_t timeout, PendingCall *ret) {
        int r;

        *ret = (PendingCall) {};
        r = sd_bus_call_async(bus, &ret->slot, m, on_call_reply, ret, timeout);
        if (r < 0)
                return log_error_errno(r, "Failed to send %s call: %m", sd_bus_message_get_member(m));
        return 0;
}

void pending_call_done(PendingCall *c) {
        c->slot = sd_bus_slot_unref(c->slot);
        c->reply = sd_bus_message_unref(c->reply);
}

int pending_call_reply(sd_bus *bus, PendingCall *c, sd_bus_error *error, sd_bus_message **ret_reply) {
        int r;

        while (!c->reply) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;

                if (daemon_check.missing) {
                        r = daemon_check_step(bus);
                        if (r < 0)
                                return r;
                }

                r = sd_bus_wait(bus, daemon_check.missing ? 100 * USEC_PER_MSEC : UINT64_MAX);
                if (r < 0 && r != -EINTR)
                        return r;
        }

        if (sd_bus_message_is_method_error(c->reply, NULL)) {
                r = sd_bus_error_copy(error, sd_bus_message_get_error(c->reply));
                /* What sd-bus answers for every call when the connection
                 * closes: the connection went, not the time. */
                if (sd_bus_error_has_name(error, SD_BUS_ERROR_NO_REPLY) && sd_bus_is_open(bus) <= 0) {
                        sd_bus_error_free(error);
                        return -ECONNRESET;
                }
                return daemon_check_failed_call(error) ?: r;
        }

        if (ret_reply)
                *ret_reply = sd_bus_message_ref(c->reply);
        return 0;
}

int bus_caller_uid(sd_bus *bus, uid_t *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *unique;
        uint32_t uid;
        int r;

        /* Peer to peer, bgrund takes the socket's peer credentials: ours. */
        if (!sd_bus_is_bus_client(bus)) {
                *ret = geteuid();
                return 0;
        }
        /* On a bus (also another host's, through ssh): as the bus sees us. */
        r = sd_bus_get_unique_name(bus, &unique);
        if (r >= 0)
                r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetConnectionUnixUser", NULL, &reply, "s", unique);
        if (r >= 0)
                r = sd_bus_message_read(reply, "u", &uid);
        if (r < 0)
                return log_error_errno(r, "Failed to learn which user the bus sees this bgrun as: %m");
        *ret = (uid_t) uid;
        return 0;
}

bool bus_target_is_remote(const BusTarget *target) {
        return target->host;
}

static const char *address_from_environment(void) {
        const char *e;

        e = getenv("BGRUN_ADDRESS");
        if (e && e[0])
                return e;
        e = getenv("BGRUN_BUS_ADDRESS"); /* its older name */
        if (e && e[0])
                return e;
        return NULL;
}

int bus_connect(const BusTarget *target, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        static char *fallback = NULL;
        const char *address = target->address;
        int r;

        if (target->host) {
                reached = REACHED_REMOTE;
                reached_where = target->host;
                r = sd_bus_open_system_remote(&bus, target->host);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to %s: %m", target->host);
                *ret = TAKE_PTR(bus);
                return 0;
        }

        if (!address && !target->transport_given)
                address = address_from_environment();

        if (address) {
                reached = REACHED_BUS_ADDRESS;
                reached_where = address;
                r = bus_open_any_address(address, &bus);
                if (errno_means_nobody_there(r))
                        return log_error_errno(r, "Nothing listens on %s (%m): is bgrund --listen, or the bus, there?",
                                               address);
                if (r < 0)
                        return log_error_errno(r, "Failed to connect to %s: %m", address);
                *ret = TAKE_PTR(bus);
                return 0;
        }

        if (target->transport == BUS_TRANSPORT_USER) {
                reached = REACHED_USER_BUS;
                r = sd_bus_open_user(&bus);
        } else {
                reached = REACHED_SYSTEM_BUS;
                r = sd_bus_open_system(&bus);
        }
        if (r >= 0) {
                r = daemon_check_start(bus);
                if (r < 0)
                        return log_error_errno(r, "Failed to send NameHasOwner call: %m");
                *ret = TAKE_PTR(bus);
                return 0;
        }
        if (!errno_means_nobody_there(r) && r != -ENOMEDIUM)
                return log_error_errno(r, "Failed to connect to the %s bus: %m",
                                       target->transport == BUS_TRANSPORT_USER ? "user" : "system");

        /* No bus at all (a container): bgrund --listen's default socket. */
        r = listen_address(target, &fallback);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "No user bus, and XDG_RUNTIME_DIR is not set to find bgrund --listen.");

        reached = REACHED_LISTEN;
        reached_where = fallback;
        r = bus_open_address(fallback, false, &bus);
        if (errno_means_nobody_there(r)) {
                log_daemon_missing();
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to connect to %s: %m", fallback);

        *ret = TAKE_PTR(bus);
        return 0;
}

int manager_new_call(sd_bus *bus, const char *method, sd_bus_message **ret, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH, BGRUN_MANAGER_INTERFACE,
                                           method);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s call: %m", method);

        /* Let polkit ask for a password when a person is there to type it. */
        r = sd_bus_message_set_allow_interactive_authorization(m, isatty(STDIN_FILENO) > 0);
        if (r < 0)
                return log_error_errno(r, "Failed to set interactive authorization: %m");

        if (types) {
                va_list ap;
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return log_error_errno(r, "Failed to build %s call: %m", method);
        }
        *ret = TAKE_PTR(m);
        return 0;
}

int manager_call_raw(sd_bus *bus, sd_bus_message *m, uint64_t timeout, sd_bus_error *error,
                     sd_bus_message **ret_reply) {
        _cleanup_(pending_call_done) PendingCall c = {};
        int r;

        r = sd_bus_call_async(bus, &c.slot, m, on_call_reply, &c, timeout);
        if (r < 0)
                return r;
        return pending_call_reply(bus, &c, error, ret_reply);
}

int manager_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id,
                 sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = manager_call_raw(bus, m, timeout, &error, ret_reply);
        if (r < 0)
                return log_call_error(sd_bus_message_get_member(m), id, &error, r);
        return 0;
}

int log_parse_error(const char *method, int r) {
        return log_error_errno(r, "Failed to parse the reply to %s: %m", method);
}

/* The reply's one a{sv}, as a JSON object. */
static int read_dict(sd_bus_message *reply, json_object **ret) {
        _cleanup_json_ json_object *dict = NULL;
        int r;

        if (!sd_bus_message_has_signature(reply, "a{sv}"))
                return -EBADMSG;

        r = bus_json_read(reply, &dict);
        if (r < 0)
                return r;
        if (r == 0 || !json_object_is_type(dict, json_type_object))
                return -EBADMSG;

        *ret = TAKE_PTR(dict);
        return 0;
}

int call_dict(sd_bus *bus, sd_bus_message *m, uint64_t timeout, const char *id, json_object **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = manager_call(bus, m, timeout, id, &reply);
        if (r < 0)
                return r;

        r = read_dict(reply, ret);
        if (r < 0)
                return log_parse_error(sd_bus_message_get_member(m), r);
        return 0;
}

static int new_id_call(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                       sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = wait_timeout ? manager_new_call(bus, method, &m, "st", id, *wait_timeout)
                         : manager_new_call(bus, method, &m, "s", id);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int call_id_dict(sd_bus *bus, const char *method, const char *id, const uint64_t *wait_timeout,
                 uint64_t call_timeout, json_object **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_id_call(bus, method, id, wait_timeout, &m);
        if (r < 0)
                return r;
        return call_dict(bus, m, call_timeout, id, ret);
}

int get_record(sd_bus *bus, const char *id, json_object **ret) {
        return call_id_dict(bus, "Get", id, NULL, 0, ret);
}

/* The call's own timeout: the wait's, and time for the answer to come. */
static uint64_t wait_call_timeout(uint64_t timeout) {
        if (timeout == USEC_INFINITY || timeout > USEC_INFINITY - CALL_MARGIN_USEC - 1)
                return USEC_INFINITY;
        return timeout + CALL_MARGIN_USEC;
}

int wait_record(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret) {
        return call_id_dict(bus, "Wait", id, &timeout, wait_call_timeout(timeout), ret);
}

int wait_record_send(sd_bus *bus, const char *id, uint64_t timeout, PendingCall *ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_id_call(bus, "Wait", id, &timeout, &m);
        if (r < 0)
                return r;
        return manager_call_send(bus, m, wait_call_timeout(timeout), ret);
}

int wait_record_finish(sd_bus *bus, PendingCall *c, const char *id, json_object **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = pending_call_reply(bus, c, &error, &reply);
        if (r < 0)
                return log_call_error("Wait", id, &error, r);
        r = read_dict(reply, ret);
        if (r < 0)
                return log_parse_error("Wait", r);
        return 0;
}

int wait_until_ended(sd_bus *bus, const char *id, uint64_t timeout, json_object **ret) {
        uint64_t deadline = USEC_INFINITY, remaining = timeout;
        int r;

        if (timeout != USEC_INFINITY && timeout < USEC_INFINITY - now_monotonic_usec())
                deadline = now_monotonic_usec() + timeout;

        for (;;) {
                _cleanup_json_ json_object *rec = NULL;
                uint64_t now;

                r = wait_record(bus, id, remaining, &rec);
                if (r < 0)
                        return r;

                now = now_monotonic_usec();
                if (!record_is_running(rec) || (deadline != USEC_INFINITY && now >= deadline)) {
                        *ret = TAKE_PTR(rec);
                        return 0;
                }

                if (deadline != USEC_INFINITY)
                        remaining = deadline - now;
        }
}
