/* SPDX-License-Identifier: MIT */
#pragma once

#include "supervise.h"

/* Start the command in its containment (and sandbox) and wait until it
 * exec'd. Any failure is published (nothing of the command ran then), but
 * what is the caller's input: that is told to bgrund as a refusal, and
 * leaves no record. */
int command_start(Supervisor *s);
