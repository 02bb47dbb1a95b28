/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund's operator configuration: /etc/bgrun/bgrund.conf, then drop-ins
 * /etc/bgrun/bgrund.conf.d/ *.conf in lexical order, later wins; a [Runtime]
 * section with ContainmentMode= and Mechanisms=. */

/* BGRUN_CONFIG_FILE and BGRUN_CONFIG_DROPIN_DIR, from meson's sysconfdir */
#include "build-config.h"
#include "mechanism.h"

typedef enum ContainmentMode {
        CONTAINMENT_ENFORCING,
        CONTAINMENT_REPORT_ONLY,
} ContainmentMode;

typedef struct BgrunConfig {
        ContainmentMode mode;
        Mechanism mechanisms[_MECHANISM_MAX]; /* in order of preference */
        unsigned n_mechanisms;
} BgrunConfig;

/* Defaults: enforcing, "systemd process_group". */
void config_init(BgrunConfig *c);

/* Load main_path (a missing file is fine) then dropin_dir/ *.conf in lexical
 * order (a missing dir is fine). On a bad value, an unknown key, a key outside
 * [Runtime], a malformed line or an empty Mechanisms= list: returns -EINVAL and
 * *ret_error (malloc'd) reads like "/etc/bgrun/bgrund.conf:3: ContainmentMode=:
 * invalid value 'strict' (expected enforcing or report-only)". Unknown
 * sections other than [Runtime] are an error too. Duplicate mechanisms are an
 * error. *ret is written only on success. */
int config_load(const char *main_path, const char *dropin_dir, BgrunConfig *ret, char **ret_error);

const char *containment_mode_to_string(ContainmentMode m);
int containment_mode_from_string(const char *s); /* ContainmentMode or -EINVAL */
