/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "macro.h"
#include "reach.h"

/* What dbus-daemon answers when activating a service took too long. */
#define DBUS_ERROR_TIMED_OUT "org.freedesktop.DBus.Error.TimedOut"

static BusReached reached = REACHED_SYSTEM_BUS;
static const char *reached_where = NULL; /* the host or the address */

BusReached bus_reached(const char **ret_where) {
        if (ret_where)
                *ret_where = reached_where;
        return reached;
}

void bus_reached_set(BusReached r, const char *where) {
        reached = r;
        reached_where = where;
}

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

bool errno_means_nobody_there(int r) {
        return r == -ENOENT || r == -ECONNREFUSED || r == -ECONNRESET || r == -ENOTCONN || r == -ENOTDIR;
}
