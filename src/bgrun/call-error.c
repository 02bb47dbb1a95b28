/* SPDX-License-Identifier: MIT */
/* A failed call told in one line that says what the user can do about it:
 * the one place where a D-Bus error is classified. */

#include <errno.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "call-error.h"
#include "connection.h"
#include "daemon-check.h"
#include "job-id.h"
#include "log.h"
#include "macro.h"

/* What dbus-daemon answers when activating a service took too long. */
#define DBUS_ERROR_TIMED_OUT "org.freedesktop.DBus.Error.TimedOut"


bool bus_error_means_daemon_missing(const sd_bus_error *error) {
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

bool errno_means_nobody_there(int r) {
        return r == -ENOENT || r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOTCONN || r == -ENOTDIR;
}

/* ssh could not reach the host, or bgrund there: whether that shows while
 * connecting (ssh gone before the handshake) or at the first call. */
int log_remote_unreachable(const char *host, int r) {
        log_error("Could not reach bgrund on %s through ssh (%s): it takes ssh access to the host "
                  "and systemd-stdio-bridge there.", host, strerror(-r));
        return r;
}

void log_daemon_missing(void) {
        const char *where;

        switch (bus_reached(&where)) {
        case REACHED_SYSTEM_BUS:
                log_error("bgrund is not running (start it with: systemctl start bgrund.service)");
                break;
        case REACHED_USER_BUS:
                log_error("bgrund --user is not running (start it with: systemctl --user start bgrund.service)");
                break;
        case REACHED_REMOTE:
                log_error("bgrund is not running on %s (start it there with: systemctl start bgrund.service)",
                          where);
                break;
        case REACHED_BUS_ADDRESS:
                log_error("bgrund is not on the bus at %s.", where);
                break;
        case REACHED_LISTEN:
                log_error("bgrund is not running: no bus, and nothing listens on %s "
                          "(start bgrund --listen, or bgrund.service where there is a bus)", where);
                break;
        }
}

int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r) {
        const char *where;
        BusReached reached = bus_reached(&where);

        if (r >= 0)
                r = -EIO;

        /* Why bgrund cannot start was said instead. */
        if (daemon_check_reported())
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
                        log_remote_unreachable(where, r);
                else if (reached == REACHED_SYSTEM_BUS || reached == REACHED_USER_BUS)
                        log_error("Lost the connection to the bus during %s: %s", method, strerror(-r));
                else
                        log_error("Lost the connection to %s during %s: %s", where, method, strerror(-r));
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
        else if (sd_bus_error_has_name(error, BGRUN_ERROR_LIMIT_NOT_ENFORCED))
                log_error("Limit not enforced, nothing was run: %s", bus_error_text(error, r));
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

int log_parse_error(const char *method, int r) {
        return log_error_errno(r, "Failed to parse the reply to %s: %m", method);
}

