/* SPDX-License-Identifier: MIT */
/* A failed call told in one line that says what the user can do about it:
 * the one place where a D-Bus error is classified (but whether it means
 * that nobody is there at all: reach.c). */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "bus-errors.h"
#include "call-error.h"
#include "daemon-check.h"
#include "deadline.h"
#include "duration.h"
#include "json-util.h"
#include "job-id.h"
#include "log.h"
#include "macro.h"
#include "reach.h"

static char deadline_text[64];


static const char *bus_error_text(const sd_bus_error *error, int r) {
        if (sd_bus_error_is_set(error) && error->message && error->message[0])
                return error->message;
        return strerror(r < 0 ? -r : r);
}

/* ssh could not reach the host, or bgrund there: whether that shows while
 * connecting (ssh gone before the handshake) or at the first call. */
int log_remote_unreachable(const char *host, int r) {
        return call_failure(BGRUN_EXIT_UNREACHABLE, bus_error_last_name(NULL, r), r,
                            "Could not reach bgrund on %s through ssh (%s): it takes ssh access to the host "
                            "and systemd-stdio-bridge there.", host, strerror(-r));
}

int log_daemon_missing_as(const char *name, int r) {
        const char *where;
        const int code = BGRUN_EXIT_UNREACHABLE;

        switch (bus_reached(&where)) {
        case REACHED_SYSTEM_BUS:
                return call_failure(code, name, r, "bgrund is not running (start it with: systemctl start bgrund.service)");
        case REACHED_USER_BUS:
                return call_failure(code, name, r, "bgrund --user is not running (start it with: systemctl --user start "
                                    "bgrund.service)");
        case REACHED_REMOTE:
                return call_failure(code, name, r, "bgrund is not running on %s (start it there with: systemctl start "
                                    "bgrund.service)", where);
        case REACHED_BUS_ADDRESS:
                return call_failure(code, name, r, "bgrund is not on the bus at %s.", where);
        case REACHED_LISTEN:
        default:
                return call_failure(code, name, r, "bgrund is not running: no bus, and nothing listens on %s "
                                    "(start bgrund --listen, or bgrund.service where there is a bus)", where);
        }
}

void log_daemon_missing(void) {
        (void) log_daemon_missing_as("ServiceUnknown", -ENOTCONN);
}

/* error's row of the error table (errors.h); sd-bus's own word for a
 * denial that asks for interaction is a denial too. */
static const BgrunErrorInfo *error_row(const sd_bus_error *error) {
        if (sd_bus_error_has_name(error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED))
                return bgrun_error_info(BGRUN_E_ACCESS_DENIED);
        return bus_error_info(error);
}

BgrunExit exit_code_for_error(const sd_bus_error *error, int r) {
        const BgrunErrorInfo *i = error_row(error);
        if (i)
                return i->exit_status;
        if (bus_error_means_daemon_missing(error) || sd_bus_error_has_names(error, SD_BUS_ERROR_NO_REPLY,
                                                                            SD_BUS_ERROR_TIMEOUT,
                                                                            SD_BUS_ERROR_DISCONNECTED))
                return BGRUN_EXIT_UNREACHABLE;
        if ((!sd_bus_error_is_set(error) || startswith_s(error->name, "System.Error.")) &&
            (errno_means_nobody_there(r) || r == -ETIMEDOUT))
                return BGRUN_EXIT_UNREACHABLE;
        return BGRUN_EXIT_FAILURE;
}

/* The failure that ends bgrun: the first one told. */
static struct {
        int exit_code;
        char *name;
        char *message;
} failure;

const char *bus_error_last_name(const sd_bus_error *error, int r) {
        const char *dot;

        if (!sd_bus_error_is_set(error) || startswith_s(error->name, "System.Error.")) {
                /* An errno, not an error bgrund sent: named as sd-bus names its own. */
                if (r == -ETIMEDOUT)
                        return "NoReply";
                if (errno_means_nobody_there(r) || r == -ENOTCONN)
                        return "Disconnected";
                return "Failed";
        }
        dot = strrchr(error->name, '.');
        return dot ? dot + 1 : error->name;
}

int call_failure(int exit_code, const char *name, int r, const char *format, ...) {
        _cleanup_free_ char *message = NULL;
        va_list ap;
        int k;

        va_start(ap, format);
        k = vasprintf(&message, format, ap);
        va_end(ap);
        if (k < 0)
                return log_oom();
        log_error("%s", message);

        if (failure.exit_code == 0) {
                failure.exit_code = exit_code;
                failure.name = strdup(name);
                failure.message = TAKE_PTR(message);
        }
        return r < 0 ? r : -EIO;
}

void call_failure_record(int exit_code, const char *name, const char *message) {
        if (failure.exit_code != 0)
                return;
        failure.exit_code = exit_code;
        failure.name = strdup(name);
        failure.message = strdup(message);
}

int call_failure_exit_code(void) {
        return failure.exit_code;
}

int call_failure_print_json(int r) {
        _cleanup_json_ json_object *o = json_object_new_object();
        const char *name = failure.name, *message = failure.message;

        if (!name) {
                name = bus_error_last_name(NULL, r);
                message = strerror(r < 0 ? -r : r);
        }
        if (!o || json_object_object_add(o, "error", json_object_new_string(name)) < 0 ||
            json_object_object_add(o, "message", json_object_new_string(message ?: "")) < 0)
                return log_oom();
        puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
        return 0;
}

int log_call_error(const char *method, const char *id, const sd_bus_error *error, int r) {
        const char *where, *text, *name;
        BusReached reached = bus_reached(&where);
        int code;

        if (r >= 0)
                r = -EIO;
        code = exit_code_for_error(error, r);
        name = bus_error_last_name(error, r);
        text = bus_error_text(error, r);

        /* Why bgrund cannot start was said instead. */
        if (daemon_check_reported()) {
                call_failure_record(BGRUN_EXIT_UNREACHABLE, "ServiceUnknown", daemon_check_said());
                return r;
        }
        if (bus_error_means_daemon_missing(error))
                return log_daemon_missing_as(name, r);
        if ((!sd_bus_error_is_set(error) || startswith_s(error->name, "System.Error.")) &&
            errno_means_nobody_there(r)) {
                /* The connection itself went: a bgrund --listen that stopped,
                 * or ssh that could not reach the host. */
                if (reached == REACHED_REMOTE)
                        return log_remote_unreachable(where, r);
                if (reached == REACHED_SYSTEM_BUS || reached == REACHED_USER_BUS)
                        return call_failure(code, name, r, "Lost the connection to the bus during %s: %s", method,
                                            strerror(-r));
                return call_failure(code, name, r, "Lost the connection to %s during %s: %s", where, method,
                                    strerror(-r));
        }

        const BgrunErrorInfo *i = error_row(error);
        if (i && i->kind == BGRUN_E_NO_SUCH_JOB && id) {
                if (!job_id_is_valid(id))
                        /* Not one that could ever be found: say why. */
                        return call_failure(code, name, r, "No job has the id \"%s\": a job id is %d characters of [a-z0-9].",
                                            id, JOB_ID_LEN);
                return call_failure(code, name, r, "Job %s not found.", id);
        }
        if (i) {
                _cleanup_free_ char *line = bgrun_error_line(i, text, i->cli_advice);
                return call_failure(code, name, r, "%s", line ?: text);
        }
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT) || r == -ETIMEDOUT)
                return call_failure(BGRUN_EXIT_UNREACHABLE, "NoReply", r,
                                    "bgrund did not answer %s within the deadline (--call-timeout, now %s).", method,
                                    format_duration(deadline_text, sizeof deadline_text, call_deadline_usec()));
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_UNKNOWN_METHOD, SD_BUS_ERROR_UNKNOWN_OBJECT,
                                   SD_BUS_ERROR_UNKNOWN_INTERFACE))
                return call_failure(code, name, r, "bgrund does not support %s (is it the same version as bgrun?): %s",
                                    method, text);
        return call_failure(code, name, r, "%s failed: %s", method, text);
}

int log_parse_error(const char *method, int r) {
        return log_error_errno(r, "Failed to parse the reply to %s: %m", method);
}

