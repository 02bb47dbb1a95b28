/* SPDX-License-Identifier: MIT */
/* bgrund: the bgrun daemon. Reads the operator's configuration, sets up the
 * runtime (runtime.c) and its D-Bus face (bus-service.c), loads and reaps
 * the job store, then serves org.bgrun.Runtime1 on the system bus. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "build-config.h"
#include "config.h"
#include "bus-listen.h"
#include "bus-service.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "runtime.h"

static const char *arg_state_dir = BGRUN_STATE_DIR;
static const char *arg_config = BGRUN_CONFIG_FILE;
static const char *arg_config_dropins = BGRUN_CONFIG_DROPIN_DIR;
static int arg_mode = -1;
static bool arg_check_config = false;
static const char *arg_listen = NULL;

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "The bgrun daemon: runs background jobs in their own containment.\n\n"
               "  -h --help                       Show this help\n"
               "     --version                    Show the version\n"
               "     --state-dir=DIR              Where job records live (default %s)\n"
               "     --config=FILE                Configuration file (default %s)\n"
               "     --containment-mode=MODE      enforcing or report-only; overrides the file\n"
               "     --check-config               Load the configuration, report, and exit\n"
               "     --listen[=ADDRESS]           Also serve the API peer to peer on ADDRESS\n"
               "                                  (default %s)\n",
               program_invocation_short_name, BGRUN_STATE_DIR, BGRUN_CONFIG_FILE, BUS_LISTEN_ADDRESS_SYSTEM);
}

static int parse_argv(int argc, char **argv) {
        enum { ARG_VERSION = 0x100, ARG_STATE_DIR, ARG_CONFIG, ARG_MODE, ARG_CHECK, ARG_LISTEN };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "containment-mode", required_argument, NULL, ARG_MODE },
                { "check-config", no_argument, NULL, ARG_CHECK },
                { "listen", optional_argument, NULL, ARG_LISTEN },
                {}
        };
        int c;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h': help(); return 0;
                case ARG_VERSION: puts(BGRUN_VERSION); return 0;
                case ARG_STATE_DIR: arg_state_dir = optarg; break;
                case ARG_CONFIG:
                        arg_config = optarg;
                        arg_config_dropins = NULL; /* an explicit file stands alone */
                        break;
                case ARG_MODE:
                        arg_mode = containment_mode_from_string(optarg);
                        if (arg_mode < 0)
                                return log_error_errno(-EINVAL, "--containment-mode=%s: expected enforcing or report-only",
                                                       optarg);
                        break;
                case ARG_CHECK: arg_check_config = true; break;
                case ARG_LISTEN: arg_listen = optarg ?: BUS_LISTEN_ADDRESS_SYSTEM; break;
                default: return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);
        return 1;
}

static int run(int argc, char **argv) {
        int r = parse_argv(argc, argv);
        if (r <= 0)
                return r;

        BgrunConfig config;
        _cleanup_free_ char *config_error = NULL;
        r = config_load(arg_config, arg_config_dropins, &config, &config_error);
        if (r < 0)
                return log_error_errno(r, "Refusing to start: %s", config_error ?: "cannot load the configuration");
        if (arg_mode >= 0)
                config.mode = arg_mode;
        if (arg_check_config) {
                /* Where this build looks, as meson's --sysconfdir and
                 * --localstatedir set it. */
                printf("# configuration: %s", arg_config);
                if (arg_config_dropins)
                        printf(", %s/*.conf", arg_config_dropins);
                printf("\n# state: %s\n", arg_state_dir);
                _cleanup_free_ char *text = NULL;
                r = config_format(&config, &text);
                if (r < 0)
                        return log_error_errno(r, "Failed to format the configuration: %m");
                fputs(text, stdout);
                return 0;
        }

        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        r = sd_event_default(&event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate the event loop: %m");
        (void) sd_event_set_watchdog(event, true);
        sigset_t ss;
        sigemptyset(&ss);
        sigaddset(&ss, SIGTERM);
        sigaddset(&ss, SIGINT);
        sigprocmask(SIG_BLOCK, &ss, NULL);
        (void) sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        (void) sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        /* A supervisor that died leaves its go pipe without a reader; that is
         * an EPIPE to handle, never a reason for bgrund to die. */
        (void) signal(SIGPIPE, SIG_IGN);

        _cleanup_(runtime_freep) Runtime *rt = NULL;
        r = runtime_new(&rt, event, arg_state_dir, &config);
        if (r < 0)
                return r;
        /* Freed first: it holds calls waiting on the runtime's jobs. */
        _cleanup_(bus_service_freep) BusService *bus = NULL;
        r = bus_service_new(&bus, rt, arg_listen);
        if (r < 0)
                return r;

        ReapCounts counts;
        r = runtime_load_jobs(rt, &counts);
        if (r < 0)
                return log_error_errno(r, "Failed to load the job store: %m");
        log_info("Started: containment mode %s, %u live jobs kept, %u released, %u orphaned units killed",
                 containment_mode_to_string(config.mode), counts.background_kept, counts.released,
                 counts.orphans_killed);

        r = bus_service_start(bus);
        if (r < 0)
                return r;
        (void) sd_notify(false, "READY=1");
        r = sd_event_loop(event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        if (r > 0) /* sd-bus leaves the loop so when a connection is lost */
                return log_error_errno(-ECONNRESET, "Lost a bus connection; exiting so that bgrund is restarted");
        (void) sd_notify(false, "STOPPING=1");
        return 0;
}

int main(int argc, char **argv) {
        log_setup("bgrund", LOG_TARGET_AUTO);
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
