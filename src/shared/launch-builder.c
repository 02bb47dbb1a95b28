/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "launch-builder.h"
#include "macro.h"
#include "strv.h"

void launch_args_done(LaunchArgs *a) {
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++)
                strv_free(a->lists[i]);
        *a = (LaunchArgs) {};
}

void launch_args_set(LaunchArgs *a, LaunchOption i, LaunchValue v) {
        v.signature = launch_options[i].signature;
        a->values[i] = v;
        a->set |= LAUNCH_OPTION_BIT(i);
}

void launch_args_unset(LaunchArgs *a, LaunchOption i) {
        a->lists[i] = strv_free(a->lists[i]);
        a->n_lists[i] = 0;
        a->values[i] = (LaunchValue) {};
        a->set &= ~LAUNCH_OPTION_BIT(i);
}

int launch_args_add_word(LaunchArgs *a, LaunchOption i, const char *word) {
        if (strv_consume(&a->lists[i], &a->n_lists[i], strdup(word)) < 0)
                return -ENOMEM;
        launch_args_set(a, i, (LaunchValue) { .strv = a->lists[i] });
        return 0;
}

int launch_args_append(const LaunchArgs *a, sd_bus_message *m) {
        int r = sd_bus_message_open_container(m, 'a', "{sv}");
        for (int numbers = 1; r >= 0 && numbers >= 0; numbers--)
                for (LaunchOption i = 0; r >= 0 && i < _LAUNCH_OPTION_MAX; i++)
                        if (launch_args_is_set(a, i) && streq(launch_options[i].signature, "t") == numbers)
                                r = bus_append_launch_entry(m, launch_options[i].name, &a->values[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

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
        return -EOPNOTSUPP; /* a signature new to the table: teach this function */
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
