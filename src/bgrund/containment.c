/* SPDX-License-Identifier: MIT */
#include "containment.h"
#include "log.h"
#include "runtime.h"

/* The registry: adding a mechanism is its file and a line here. */
static const ContainmentOps *const registry[_MECHANISM_MAX] = {
        [MECHANISM_SYSTEMD] = &containment_systemd_ops,
        [MECHANISM_CGROUPFS] = &containment_cgroupfs_ops,
        [MECHANISM_PROCESS_GROUP] = &containment_process_group_ops,
};

const ContainmentOps *containment_ops(Mechanism m) {
        return (unsigned) m < _MECHANISM_MAX ? registry[m] : NULL;
}

int containments_init(Runtime *rt) {
        /* Every registered mechanism can release what an earlier
         * configuration started; only the configured ones start jobs. */
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++)
                rt->containments[m] = (Containment) { .ops = containment_ops(m), .runtime = rt };

        for (unsigned i = 0; i < rt->config.n_mechanisms; i++) {
                Containment *c = &rt->containments[rt->config.mechanisms[i]];
                if (!c->ops)
                        continue;
                int r = c->ops->init ? c->ops->init(c) : 0;
                if (r < 0) {
                        log_warning_errno(r, "The %s mechanism is off: %m", mechanism_to_string(c->ops->mechanism));
                        continue;
                }
                c->initialized = true;
        }
        return 0;
}

void containments_done(Runtime *rt) {
        for (Mechanism m = 0; m < _MECHANISM_MAX; m++) {
                Containment *c = &rt->containments[m];
                if (c->initialized && c->ops->done)
                        c->ops->done(c);
                c->initialized = false;
        }
}

bool containment_usable(Containment *c) {
        if (!c || !c->initialized || !c->ops->available(c))
                return false;
        return mechanism_contains(c->ops->mechanism) || c->runtime->config.mode == CONTAINMENT_REPORT_ONLY;
}
