/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdint.h>

#include "job-record.h"

/* The command's environment, built before fork: a login-like base (PATH,
 * HOME, USER, LOGNAME, SHELL, BGRUN_JOB_ID, in this order), then the caller's
 * entries in theirs. A caller's entry whose name is already there replaces
 * it in place. *ret is a malloc'd NULL-terminated list. */
int job_environment(const JobSpec *spec, char ***ret);

/* A job with AllowedDomains gets the proxy's variables (HTTP_PROXY,
 * HTTPS_PROXY and their lower-case forms, over the caller's) with this
 * placeholder port, which its child, once it listens for the proxy, puts
 * its port in place of (job_environment_set_proxy_port()); NO_PROXY and
 * no_proxy (the loopback) and NODE_USE_ENV_PROXY=1 with them. */
#define PROXY_URL_PLACEHOLDER "http://127.0.0.1:00000"

/* In the command's child (no allocation: it shares the supervisor's
 * memory): the placeholder of env's proxy variables becomes port. */
void job_environment_set_proxy_port(char **env, uint16_t port);
