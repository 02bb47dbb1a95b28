/* SPDX-License-Identifier: MIT */
/* bgrun: the command-line front end of bgrund. It talks to the daemon over
 * D-Bus only (org.bgrun.Runtime1 on the system bus, the user's bus, another
 * host's over ssh, or any address: bgrund --listen's socket).
 * Here only main(): parse the command line (cmdline.c), connect
 * (connection.c) and hand over to the verb (verbs.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>

#include "connection.h"
#include "cmdline.h"
#include "log.h"
#include "macro.h"

static int run(Args *args, int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = parse_argv(args, argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_SUCCESS;

        r = bus_connect(&args->target, &bus);
        if (r < 0)
                return r;

        return args->verb->dispatch(bus, args);
}

int main(int argc, char *argv[]) {
        _cleanup_(args_done) Args args = {};
        int r;

        log_setup("bgrun", LOG_TARGET_CONSOLE);
        r = run(&args, argc, argv);

        if (fflush(stdout) == EOF && r >= 0) {
                log_error_errno(errno, "Failed to write output: %m");
                return EXIT_FAILURE;
        }
        return r < 0 ? EXIT_FAILURE : r;
}
