/* SPDX-License-Identifier: MIT */
/* Temporary minimal bgrund: owns the name and answers Peer.Ping. */
#include <stdio.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

int main(void) {
        sd_event *e = NULL;
        sd_bus *bus = NULL;
        int r = sd_event_default(&e);
        if (r >= 0) r = sd_bus_open_system(&bus);
        if (r >= 0) r = sd_bus_request_name(bus, "org.bgrun.Runtime1", 0);
        if (r >= 0) r = sd_bus_attach_event(bus, e, 0);
        if (r >= 0) r = sd_event_loop(e);
        if (r < 0) fprintf(stderr, "bgrund: %d\n", r);
        return r < 0;
}
