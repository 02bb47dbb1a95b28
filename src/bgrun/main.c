/* SPDX-License-Identifier: MIT */
/* bgrun: the command-line front end of bgrund. It talks to the daemon over
 * D-Bus only (org.bgrun.Runtime1 on the system bus, the user's bus, another
 * host's over ssh, or any address: bgrund --listen's socket).
 * Here only main(): parse the command line (cmdline.c), connect
 * (connection.c) and hand over to the verb (verbs.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "bus-errors.h"
#include "call-error.h"
#include "connection.h"
#include "cmdline.h"
#include "deadline.h"
#include "log.h"
#include "macro.h"
#include "verb-mcp.h"

static int run(Args *args, int argc, char *argv[]) {
        _cleanup_(bus_closep) sd_bus *bus = NULL;
        int r;

        r = parse_argv(args, argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        call_deadline_set(args->call_timeout_usec);
        r = bus_errors_register();
        if (r < 0)
                return log_error_errno(r, "Cannot register bgrun's D-Bus errors: %m");

        verb_table_provide(VERB_MCP, verb_mcp);
        if (args->verb->flag == VERB_MCP)
                verb_mcp_prepare(args);
        r = bus_connect(&args->target, &bus);
        if (r < 0) {
                /* Said already, in one line: bgrund cannot be reached. */
                if (r != -ENOMEM)
                        call_failure_record(BGRUN_EXIT_UNREACHABLE, bus_error_last_name(NULL, r), strerror(-r));
                return r;
        }

        return args->verb->dispatch(bus, args);
}

/* A failure's exit status (core/errors.h); with --json, also said as one
 * object on stdout. */
static int exit_status_of(const Args *args, int r) {
        if (r >= 0)
                return r;
        if (args->json)
                (void) call_failure_print_json(r);
        return call_failure_exit_code() ?: BGRUN_EXIT_FAILURE;
}

int main(int argc, char *argv[]) {
        _cleanup_(args_done) Args args = {};
        int r;

        log_setup("bgrun", LOG_TARGET_CONSOLE);
        r = exit_status_of(&args, run(&args, argc, argv));

        if (fflush(stdout) == EOF && r == EXIT_SUCCESS) {
                log_error_errno(errno, "Failed to write output: %m");
                return BGRUN_EXIT_FAILURE;
        }
        return r;
}
