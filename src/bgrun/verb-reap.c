/* SPDX-License-Identifier: MIT */
/* bgrun reap: every job re-checked as bgrund does at start (admin). */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bgrun/bus-api.h"
#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "print.h"
#include "record.h"
#include "verbs.h"

int verb_reap(sd_bus *bus, const Args *args) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_json_ json_object *result = NULL;
        uint64_t kept = 0, released = 0, orphans_killed = 0;
        int r;

        r = manager_new_call(bus, "Reap", &m, NULL);
        if (r < 0)
                return r;

        r = call_dict(bus, m, call_timeout(CALL_TIMEOUT_TEARDOWN), NULL, &result);
        if (r < 0)
                return r;

        if (args->json)
                return print_json(result);

        /* A count bgrund did not send is 0, as it always was here. */
        (void) dict_get_uint(result, &reap_keys[REAP_KEY_BACKGROUND_KEPT], &kept);
        (void) dict_get_uint(result, &reap_keys[REAP_KEY_RELEASED], &released);
        (void) dict_get_uint(result, &reap_keys[REAP_KEY_ORPHANS_KILLED], &orphans_killed);

        printf("Background jobs kept:    %" PRIu64 "\n"
               "Containments released:   %" PRIu64 "\n"
               "Orphans killed:          %" PRIu64 "\n",
               kept, released, orphans_killed);
        return EXIT_SUCCESS;
}
