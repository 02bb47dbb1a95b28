/* SPDX-License-Identifier: MIT */
#include "bus-launch-value.h"
#include "macro.h"

static int append_value(sd_bus_message *m, const LaunchValue *v) {
        switch (v->signature[0]) {
        case 't':
                return sd_bus_message_append_basic(m, 't', &v->u64);
        case 'i': {
                int32_t i32 = (int32_t) (int64_t) v->u64;
                return sd_bus_message_append_basic(m, 'i', &i32);
        }
        case 'b': {
                int b = v->u64 != 0;
                return sd_bus_message_append_basic(m, 'b', &b);
        }
        case 'q': {
                uint16_t q = (uint16_t) v->u64;
                return sd_bus_message_append_basic(m, 'q', &q);
        }
        case 'u': {
                uint32_t u = (uint32_t) v->u64;
                return sd_bus_message_append_basic(m, 'u', &u);
        }
        case 's':
                return sd_bus_message_append_basic(m, 's', v->str);
        }
        if (streq(v->signature, "as"))
                return sd_bus_message_append_strv(m, (char **) v->strv);
        return -EOPNOTSUPP; /* a type new to the table: teach this function */
}

int bus_append_launch_entry(sd_bus_message *m, const char *name, const LaunchValue *v) {
        int r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0) r = sd_bus_message_append_basic(m, 's', name);
        if (r >= 0) r = sd_bus_message_open_container(m, 'v', v->signature);
        if (r >= 0) r = append_value(m, v);
        if (r >= 0) r = sd_bus_message_close_container(m);
        if (r >= 0) r = sd_bus_message_close_container(m);
        return r;
}
