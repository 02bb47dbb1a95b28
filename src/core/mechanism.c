/* SPDX-License-Identifier: MIT */
#include "macro.h"
#include "mechanism.h"

static const struct {
        const char *name;
        bool contains;
} mechanism_table[_MECHANISM_MAX] = {
        [MECHANISM_SYSTEMD] = { "systemd", true },
        [MECHANISM_CGROUPFS] = { "cgroupfs", true },
        [MECHANISM_PROCESS_GROUP] = { "process_group", false },
};

const char *mechanism_to_string(Mechanism m) {
        return (unsigned) m < _MECHANISM_MAX ? mechanism_table[m].name : NULL;
}

int mechanism_from_string(const char *s) {
        for (int i = 0; s && i < _MECHANISM_MAX; i++)
                if (streq(s, mechanism_table[i].name))
                        return i;
        return -EINVAL;
}

bool mechanism_contains(Mechanism m) {
        return (unsigned) m < _MECHANISM_MAX && mechanism_table[m].contains;
}

const char *mechanism_names(void) {
        return "systemd, cgroupfs or process_group";
}
