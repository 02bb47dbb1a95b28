/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrund's operator configuration: /etc/bgrun/bgrund.conf, then drop-ins
 * /etc/bgrun/bgrund.conf.d/ *.conf in lexical order, later wins; a [Runtime]
 * section with ContainmentMode= and Mechanisms=, and a [Limits] section. */

/* BGRUN_CONFIG_FILE and BGRUN_CONFIG_DROPIN_DIR, from meson's sysconfdir */
#include "build-config.h"
#include "mechanism.h"

#include <stdint.h>

typedef enum ContainmentMode {
        CONTAINMENT_ENFORCING,
        CONTAINMENT_REPORT_ONLY,
} ContainmentMode;

/* [Limits]: per owner (uid) unless said otherwise; UINT64_MAX is infinity. */
typedef struct BgrunLimits {
        uint64_t max_running_jobs;          /* MaxRunningJobs=: running at once */
        uint64_t max_queued_jobs;           /* MaxQueuedJobs=: waiting in queues (Queue) at once */
        uint64_t max_records;               /* MaxRecords=: records kept, oldest ended forgotten past it */
        uint64_t retention_usec;            /* RetentionSec=: ended records older are forgotten */
        uint64_t output_max_bytes;          /* OutputMaxBytes=: kept per job (head and tail halves) */
        uint64_t output_max_bytes_per_user; /* OutputMaxBytesPerUser=: kept for all of an owner's jobs */
        uint64_t tasks_max;                 /* TasksMax=, MemoryMax=, CPUWeight=: on the owner's slice */
        uint64_t memory_max;
        uint64_t cpu_weight;
        uint64_t keep_free;                 /* KeepFree=: (whole filesystem) output is dropped below it */
        uint64_t default_max_runtime_usec;  /* DefaultMaxRuntimeSec=: a job's limit when it asked none; UINT64_MAX: none */
        uint64_t max_runtime_usec;          /* MaxRuntimeSec=: the longest an owner may ask for; UINT64_MAX: none */
} BgrunLimits;

typedef struct BgrunConfig {
        ContainmentMode mode;
        Mechanism mechanisms[_MECHANISM_MAX]; /* in order of preference */
        unsigned n_mechanisms;
        BgrunLimits limits;
} BgrunConfig;

/* Defaults: enforcing, "systemd cgroupfs process_group", and the contract's
 * limits. */
void config_init(BgrunConfig *c);

/* Load main_path (a missing file is fine) then dropin_dir/ *.conf in lexical
 * order (a missing dir is fine). On a bad value, an unknown key, a key outside
 * a section, a malformed line or an empty Mechanisms= list: returns -EINVAL and
 * *ret_error (malloc'd) reads like "/etc/bgrun/bgrund.conf:3: ContainmentMode=:
 * invalid value 'strict' (expected enforcing or report-only)". Sections other
 * than [Runtime] and [Limits] are an error too. Duplicate mechanisms are an
 * error, and so is a DefaultMaxRuntimeSec= above MaxRuntimeSec=
 * (config_check()). *ret is written only on success. */
int config_load(const char *main_path, const char *dropin_dir, BgrunConfig *ret, char **ret_error);

/* Apply one file's text (its name for messages in label) on top of c, as
 * config_load() does for each file; c may be half-applied on failure. For
 * tests and the fuzzer. */
int config_parse_string(const char *label, const char *text, BgrunConfig *c, char **ret_error);

/* The rules between keys, once every file was read: -EINVAL with
 * *ret_error (malloc'd) naming the keys and their values. */
int config_check(const BgrunConfig *c, char **ret_error);

/* The effective configuration in the file's own syntax, every key given:
 * loading it again gives the same configuration. */
int config_format(const BgrunConfig *c, char **ret);

const char *containment_mode_to_string(ContainmentMode m);
int containment_mode_from_string(const char *s); /* ContainmentMode or -EINVAL */
