/* SPDX-License-Identifier: MIT */
#pragma once

/* The verbs of bgrun, one function each: launching (verb-run.c), ending
 * (verb-end.c: stop, kill; verb-wait.c; verb-forget.c), showing
 * (verb-show.c: status, logs, list), input (verb-send.c) and reap
 * (verb-reap.c). args->words[0] is the verb, the rest its arguments. Each
 * returns bgrun's exit status, or a negative error it has logged. */

#include <systemd/sd-bus.h>

#include "cmdline.h"

int verb_run(sd_bus *bus, const Args *args);
int verb_status(sd_bus *bus, const Args *args);
int verb_logs(sd_bus *bus, const Args *args);
int verb_stop(sd_bus *bus, const Args *args);
int verb_kill(sd_bus *bus, const Args *args);
int verb_send(sd_bus *bus, const Args *args);
int verb_list(sd_bus *bus, const Args *args);
int verb_wait(sd_bus *bus, const Args *args);
int verb_forget(sd_bus *bus, const Args *args);
int verb_reap(sd_bus *bus, const Args *args);
int verb_attach(sd_bus *bus, const Args *args);

/* run's COMMAND from the words after --: one is a shell command line;
 * several, each quoted for /bin/sh so that the shell runs exactly those
 * words (what a bgrund without Argv is sent instead of Argv). */
char *command_from_words(char *const *words);
