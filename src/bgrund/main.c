/* SPDX-License-Identifier: MIT */
/* bgrund: the bgrun daemon. Reads the operator's configuration, sets up the
 * runtime (runtime.c) and its D-Bus face (bus-service.c), loads and reaps
 * the job store, then serves org.bgrun.Runtime1 on the system bus, or with
 * --user on the user's session bus, for that user alone.
 *
 * bgrund has one loop, and nothing in it waits on a process, a peer or a
 * file system that a caller controls. What can block in it at all:
 *  - files of its own state directory (records read and written; a
 *    released job's result.json fsync'd): the administrator's file system;
 *  - cgroup files (cgroup.kill, cgroup.events, cgroup.procs) and /proc files
 *    that take no lock a process can hold (stat, cgroup, status; cmdline only
 *    of bgrund's own supervisors, which run as bgrund's user);
 *  - the user database (getpwuid_r, getgrouplist) for a Launch's user: the
 *    administrator's NSS;
 *  - waitid() on bgrund's own supervisor children killed before they ran
 *    anything of a job;
 *  - under cgroupfs, an idle supervisor of its pool forking the job's into
 *    its cgroup (supervisor_pool_take()): a process of bgrund's own, which
 *    holds nothing of any caller's and only forks; 5 s at most;
 *  - at start, before serving: one call to the user's systemd manager
 *    (bgrund --user) and the loading of the store.
 * Everything else is an event source: the bus and --listen connections,
 * polkit and the bus daemon's answers (asked asynchronously), the
 * supervisors' pidfds, readiness pipes and control sockets (connected
 * without blocking; a greeting that has not come holds the call, not the
 * loop), and timers. A job's cwd is looked up by its own process. */
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "bgrun/bus-api.h"
#include "build-config.h"
#include "config.h"
#include "bus-errors.h"
#include "bus-listen.h"
#include "bus-service.h"
#include "job-store.h"
#include "log.h"
#include "macro.h"
#include "mkdir.h"
#include "runtime.h"

static bool arg_user = false;
static const char *arg_state_dir = NULL;
static const char *arg_config = NULL;
static int arg_mode = -1;
static bool arg_check_config = false;
static const char *arg_listen = NULL;

static void help(void) {
        printf("%s [OPTIONS...]\n\n"
               "The bgrun daemon: runs background jobs in their own containment.\n\n"
               "  -h --help                       Show this help\n"
               "     --version                    Show the version\n"
               "     --user                       Serve the calling user alone, on its session bus\n"
               "                                  and systemd manager\n"
               "     --state-dir=DIR              Where job records live (default %s,\n"
               "                                  with --user $XDG_STATE_HOME/bgrun)\n"
               "     --config=FILE                Configuration file (default %s,\n"
               "                                  with --user $XDG_CONFIG_HOME/bgrun/bgrund.conf)\n"
               "     --containment-mode=MODE      enforcing or report-only; overrides the file\n"
               "     --check-config               Load the configuration, report, and exit\n"
               "     --listen[=ADDRESS]           Also serve the API peer to peer on ADDRESS\n"
               "                                  (default %s,\n"
               "                                  with --user unix:path=$XDG_RUNTIME_DIR/bgrun/bus)\n",
               program_invocation_short_name, BGRUN_STATE_DIR, BGRUN_CONFIG_FILE, BGRUN_LISTEN_ADDRESS_SYSTEM);
}

static int parse_argv(int argc, char **argv) {
        enum { ARG_VERSION = 0x100, ARG_STATE_DIR, ARG_CONFIG, ARG_MODE, ARG_CHECK, ARG_USER, ARG_LISTEN };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "user", no_argument, NULL, ARG_USER },
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
                case ARG_USER: arg_user = true; break;
                case ARG_STATE_DIR: arg_state_dir = optarg; break;
                case ARG_CONFIG: arg_config = optarg; break; /* an explicit file stands alone */
                case ARG_MODE:
                        arg_mode = containment_mode_from_string(optarg);
                        if (arg_mode < 0)
                                return log_error_errno(-EINVAL, "--containment-mode=%s: expected enforcing or report-only",
                                                       optarg);
                        break;
                case ARG_CHECK: arg_check_config = true; break;
                case ARG_LISTEN: arg_listen = optarg ?: ""; break; /* "": the instance's default */
                default: return -EINVAL;
                }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Unexpected argument: %s", argv[optind]);
        return 1;
}

static char *path_join(const char *dir, const char *name) {
        char *p;
        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* $NAME, or ~/FALLBACK for the user's home, as the XDG base directory
 * specification says: a relative $NAME is ignored. */
static int xdg_dir(const char *name, const char *fallback, char **ret) {
        const char *v = getenv(name);
        if (v && v[0] == '/')
                return (*ret = strdup(v)) ? 0 : -ENOMEM;
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
                struct passwd *pw = getpwuid(geteuid());
                home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
        }
        if (!home)
                return log_error_errno(-ENOENT, "Neither $%s nor a home directory is set", name);
        return (*ret = path_join(home, fallback)) ? 0 : -ENOMEM;
}

/* --listen's address: as given, or the instance's default socket, the
 * user's in its runtime directory. */
static int resolve_listen_address(char **ret) {
        char *a;
        if (arg_listen[0])
                a = strdup(arg_listen);
        else if (!arg_user)
                a = strdup(BGRUN_LISTEN_ADDRESS_SYSTEM);
        else {
                const char *runtime_dir = getenv("XDG_RUNTIME_DIR");
                if (!runtime_dir || runtime_dir[0] != '/')
                        return log_error_errno(-EINVAL, "--user --listen needs XDG_RUNTIME_DIR, or an ADDRESS");
                if (asprintf(&a, "unix:path=%s/" BGRUN_LISTEN_SOCKET_USER, runtime_dir) < 0)
                        a = NULL;
        }
        if (!a)
                return log_oom();
        *ret = a;
        return 0;
}

/* Where this instance keeps its state and reads its configuration: the
 * build's system paths, or with --user the user's XDG directories; an
 * explicit --state-dir or --config wins (and a --config file stands alone). */
static int resolve_paths(char **ret_state, char **ret_config, char **ret_dropins) {
        _cleanup_free_ char *state = NULL, *config = NULL, *dropins = NULL;
        if (arg_user) {
                _cleanup_free_ char *state_home = NULL, *config_home = NULL;
                int r = xdg_dir("XDG_STATE_HOME", ".local/state", &state_home);
                if (r >= 0)
                        r = xdg_dir("XDG_CONFIG_HOME", ".config", &config_home);
                if (r < 0)
                        return r;
                state = path_join(state_home, "bgrun");
                config = path_join(config_home, "bgrun/bgrund.conf");
                dropins = path_join(config_home, "bgrun/bgrund.conf.d");
        } else {
                state = strdup(BGRUN_STATE_DIR);
                config = strdup(BGRUN_CONFIG_FILE);
                dropins = strdup(BGRUN_CONFIG_DROPIN_DIR);
        }
        if (arg_state_dir) {
                free(state);
                state = strdup(arg_state_dir);
        }
        if (arg_config) {
                free(config);
                free(dropins);
                config = strdup(arg_config);
                dropins = NULL;
        }
        if (!state || !config || (!dropins && !arg_config))
                return -ENOMEM;
        *ret_state = TAKE_PTR(state);
        *ret_config = TAKE_PTR(config);
        *ret_dropins = TAKE_PTR(dropins);
        return 0;
}

static int run(int argc, char **argv) {
        int r = parse_argv(argc, argv);
        if (r <= 0)
                return r;
        r = bus_errors_register();
        if (r < 0)
                return log_error_errno(r, "Cannot register bgrun's D-Bus errors: %m");
        _cleanup_free_ char *state_dir = NULL, *config_path = NULL, *config_dropins = NULL;
        r = resolve_paths(&state_dir, &config_path, &config_dropins);
        if (r < 0)
                return log_error_errno(r, "Cannot tell where the state and configuration are: %m");

        BgrunConfig config;
        _cleanup_free_ char *config_error = NULL;
        r = config_load(config_path, config_dropins, &config, &config_error);
        if (r < 0)
                return log_error_errno(r, "Refusing to start: %s", config_error ?: "cannot load the configuration");
        if (arg_mode >= 0)
                config.mode = arg_mode;
        if (arg_check_config) {
                /* Where this build looks, as meson's --sysconfdir and
                 * --localstatedir set it (--user: the XDG directories). */
                printf("# configuration: %s", config_path);
                if (config_dropins)
                        printf(", %s/*.conf", config_dropins);
                printf("\n# state: %s\n", state_dir);
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

        if (arg_user) {
                /* 0700, as the XDG specification asks. */
                r = mkdir_parents(state_dir, 0700);
                if (r < 0)
                        return log_error_errno(r, "Cannot make the parents of %s: %m", state_dir);
        }
        _cleanup_(runtime_freep) Runtime *rt = NULL;
        r = runtime_new(&rt, event, state_dir, &config, arg_user);
        if (r < 0)
                return r;
        /* Freed first: it holds calls waiting on the runtime's jobs. */
        _cleanup_free_ char *listen_address = NULL;
        if (arg_listen) {
                r = resolve_listen_address(&listen_address);
                if (r < 0)
                        return r;
        }
        _cleanup_(bus_service_freep) BusService *bus = NULL;
        r = bus_service_new(&bus, rt, listen_address);
        if (r < 0)
                return r;

        ReapCounts counts;
        r = runtime_load_jobs(rt, &counts);
        if (r < 0)
                return log_error_errno(r, "Failed to load the job store: %m");
        log_info("Started: containment mode %s, %u live jobs kept, %u released, %u orphaned units killed",
                 containment_mode_to_string(config.mode), counts.background_kept, counts.released,
                 counts.orphans_killed);

        /* Serve last, so no caller ever sees a half-loaded daemon: the
         * socket, then the bus name. */
        if (listen_address) {
                r = bus_listen_new(bus, listen_address);
                if (r < 0)
                        return r;
        }
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
