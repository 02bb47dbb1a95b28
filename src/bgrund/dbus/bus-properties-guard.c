/* SPDX-License-Identifier: MIT */
/* org.freedesktop.DBus.Properties on bgrund's objects: sd-bus answers Get,
 * GetAll and Set itself, and an interface or property it does not know it
 * names in its error, so a 4 MiB name is checked as UTF-8 again and again
 * (in the error, in the reply, on the way out): some 4 times what reading
 * it once costs. A name of the D-Bus specification is at most 255 bytes;
 * this filter reads the names once, before sd-bus, and refuses a longer one
 * with an error that does not repeat it. */
#include <string.h>

#include "bus-properties-guard.h"
#include "macro.h"

/* The specification's bound on an interface or member name. */
#define BUS_NAME_MAX 255U

static int properties_filter(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        if (!sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties", NULL))
                return 0;
        const char *member = sd_bus_message_get_member(m), *sig = sd_bus_message_get_signature(m, true);
        unsigned names = !member                                    ? 0
                         : streq(member, "GetAll")                  ? 1
                         : streq(member, "Get") || streq(member, "Set") ? 2
                                                                    : 0;
        if (!names || !sig || strspn(sig, "s") < names)
                return 0; /* sd-bus refuses what it cannot read, naming nothing */
        for (unsigned i = 0; i < names; i++) {
                const char *name;
                if (sd_bus_message_read_basic(m, 's', &name) < 0)
                        break;
                if (strlen(name) > BUS_NAME_MAX) {
                        (void) sd_bus_reply_method_errorf(m, SD_BUS_ERROR_INVALID_ARGS,
                                                          "Properties.%s: an interface or property name is at most %u bytes",
                                                          member, BUS_NAME_MAX);
                        return 1;
                }
        }
        (void) sd_bus_message_rewind(m, true);
        return 0;
}

int bus_properties_guard_add(sd_bus *bus) {
        return sd_bus_add_filter(bus, NULL, properties_filter, NULL);
}
