/* SPDX-License-Identifier: MIT */
/* Subscribe and Unsubscribe: a caller's connection asks for bgrund's
 * signals (JobNew, JobRemoved, …), kept in its record (bus-client.c). */
#include "bus-authority.h"
#include "bus-client.h"
#include "bus-peer.h"
#include "bus-service.h"
#include "bus-subscribe.h"

int bus_method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        uid_t uid;
        int r = bus_caller_uid(s, m, &uid, error);
        if (r < 0)
                return r;
        /* Admins see every job's signals; polkit is asked once, here. */
        int admin = caller_is_admin(s, m, uid);
        if (BUS_AUTH_PENDING(admin))
                return 1;

        BusClient *c;
        r = bus_client_get(s, m, uid, &c);
        if (r < 0)
                return r;
        r = bus_client_subscribe(c, admin > 0, error);
        if (r < 0) {
                bus_client_release(c);
                return r;
        }
        return sd_bus_reply_method_return(m, "");
}

int bus_method_unsubscribe(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusService *s = userdata;
        const char *name = bus_caller_name(s, m);
        BusClient *c = name ? bus_client_find(s, name) : NULL;
        if (c)
                bus_client_unsubscribe(c);
        return sd_bus_reply_method_return(m, "");
}
