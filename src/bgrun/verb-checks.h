/* SPDX-License-Identifier: MIT */
#pragma once

/* Each verb's own checks of its options together: > 0 to go on, < 0 on a
 * usage error (logged). */

#include "cmdline.h"

int check_run(Args *args);
int check_kill(Args *args);
int check_send(Args *args);
int check_forget(Args *args);
int check_logs(Args *args);
int check_list(Args *args);
