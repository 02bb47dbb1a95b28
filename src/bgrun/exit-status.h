/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's exit status, the one place its numbers are chosen (bgrun(1) EXIT
 * STATUS, bgrun help and the README list them). 0 is success and 2 a usage
 * error, as everywhere; each outcome of bgrun's own has a code of its own in
 * 240-247, out of the way of the statuses a job exits with (run --wait and
 * wait pass those on; 124-143 are timeout(1)'s and a shell's). */

typedef enum BgrunExit {
        BGRUN_EXIT_NO_SUCH_JOB = 240,          /* NoSuchJob */
        BGRUN_EXIT_INVALID_INPUT = 241,        /* InvalidArgs: bgrund turned the input down */
        BGRUN_EXIT_ACCESS_DENIED = 242,        /* AccessDenied */
        BGRUN_EXIT_LIMIT = 243,                /* LimitExceeded, LimitNotEnforced, InputFull */
        BGRUN_EXIT_CONTAINMENT_REFUSED = 244,  /* ContainmentRefused */
        BGRUN_EXIT_UNREACHABLE = 245,          /* bgrund not reachable, or not answering within the deadline */
        BGRUN_EXIT_STILL_RUNNING = 246,        /* wait -t: a job still running */
        BGRUN_EXIT_FAILURE = 247,              /* any other failure (JobNotFinished, NoInput, I/O, ...) */
} BgrunExit;
