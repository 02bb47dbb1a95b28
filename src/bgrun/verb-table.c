/* SPDX-License-Identifier: MIT */
/* The verbs: their words, their own checks, their action, and their help. */

#include <errno.h>
#include <stdio.h>

#include "cmdline.h"
#include "log.h"
#include "macro.h"
#include "verb-checks.h"
#include "verbs.h"

static const char run_details[] =
        "Start COMMAND as a background job of bgrund and print its ID. One word after\n"
        "-- is a shell command line ('make && make test'); several words are a program\n"
        "and its arguments, run exactly as given with no shell (a shell builtin such as\n"
        "cd or exit needs the one-word form).\n"
        "\n"
        "The job gets this environment, except: variables whose names contain KEY,\n"
        "SECRET, TOKEN, PASSWORD, PASSWD, CREDENTIAL, AUTH, COOKIE or PRIVATE, or end in\n"
        "_PAT or _PASS (any case; so also GIT_AUTHOR_NAME, SSH_AUTH_SOCK, KEYBOARD_*);\n"
        "values with a password in a URL (scheme://user:pass@); and NOTIFY_SOCKET,\n"
        "LISTEN_*, JOURNAL_STREAM, INVOCATION_ID, BGRUN_*. --env-allow NAME passes one\n"
        "of them anyway. With -H, only -E is sent.\n"
        "\n"
        "Options:\n"
        "  -s --session=SESSION      Tag the job with SESSION (see kill --session;\n"
        "                            default: $BGRUN_SESSION)\n"
        "  -C --directory=DIR        Working directory (default: the current one; / with -H)\n"
        "  -t --timeout=DURATION     End the job after DURATION (MaxRuntimeUSec=)\n"
        "  -E --setenv=NAME=VALUE    Set an environment variable (repeatable)\n"
        "  -p --property=PROP=VALUE  Set a launch option (repeatable):\n"
        "                              MemoryMax=BYTES (K, M, G, T: powers of 1024; or infinity)\n"
        "                              TasksMax=N (or infinity)\n"
        "                              CPUQuotaPerSecUSec=PERCENT% or DURATION (50% = 500ms)\n"
        "                              MaxRuntimeUSec=DURATION\n"
        "                              StopSignal=SIGNAL, StopGraceUSec=DURATION (how stop ends it)\n"
        "                              User=NAME (root only; that user's HOME, USER, LOGNAME\n"
        "                              and SHELL win over this environment's)\n"
        "                              PrivateNetwork=yes (a network of its own, loopback only)\n"
        "                              PrivateTmp=yes (a /tmp, /var/tmp, /dev/shm of its own)\n"
        "                              ProtectSystem=yes|full|strict (the system read-only)\n"
        "                              ProtectHome=yes|read-only|tmpfs (the home directories)\n"
        "                              ReadWritePaths=, ReadOnlyPaths=, InaccessiblePaths=PATH...\n"
        "                              (absolute, by spaces; -PATH: skipped if missing)\n"
        "     --sandbox=PROFILE      workspace: everything read-only but the working\n"
        "                            directory (its .git read-only too), a /tmp of its\n"
        "                            own, no network; read-only: the working directory\n"
        "                            too; off (the default). -p adds to a profile\n"
        "     --network              Keep the network in a --sandbox profile\n"
        "     --no-network           No network (PrivateNetwork=yes), with or without one\n"
        "     --allow-domain=NAME    HTTP(S) to NAME only (repeatable; *.NAME: its subdomains,\n"
        "                            NAME:PORT), through a proxy bgrun runs for the job:\n"
        "                            AllowedDomains=, with PrivateNetwork=yes\n"
        "     --clean-env            Pass none of this environment (only -E)\n"
        "     --env-allow=NAME       Pass NAME although the rules above drop it (repeatable)\n"
        "     --wait                 Stream the output and exit with the job's status\n"
        "                            (128+N for signal N, 124 on timeout); with --json,\n"
        "                            print the final record instead. Ctrl-C stops the job\n"
        "                            gracefully (a second one kills it at once); the job\n"
        "                            is bound to this bgrun: killed, even with SIGKILL,\n"
        "                            it leaves no job behind (not with --tty)\n"
        "     --strict-limits        Refuse the job if a limit of -p cannot be enforced\n"
        "                            here (without: it is said on stderr, and recorded)\n"
        "     --stdin                Forward this standard input to the job until its end\n"
        "                            (from a terminal without --wait, the input stays open\n"
        "                            for bgrun send)\n"
        "     --open-stdin           Keep the job's input open for bgrun send, forwarding\n"
        "                            nothing (for a program with no terminal)\n"
        "     --tty                  Run the job on a terminal; with --wait attach this one\n"
        "                            to it (raw mode; ^] three times within 1s detaches)\n"
        "     --request-id=ID        Launch at most once: running the same line again with\n"
        "                            this ID (a retry, a restarted script) answers the\n"
        "                            first's job and starts nothing (RequestId=)\n"
        "     --queue                Past MaxRunningJobs= or the session's --parallel, wait\n"
        "                            in bgrund's queue (status queued) instead of failing;\n"
        "                            the job starts in launch order as room comes (Queue=)\n"
        "     --parallel=N           At most N jobs of the session -s run at once\n"
        "                            (MaxParallel=)\n"
        "  -q --quiet                No 'Running as job ID' line with --wait\n"
        "     --json                 Print the record as JSON\n"
        "\n"
        "Options after the first word of COMMAND belong to COMMAND.\n"
        "\n"
        "Examples:\n"
        "  bgrun run -- 'make -j4 > build.log 2>&1; echo done'\n"
        "  bgrun run --wait -- python3 -c 'print(1)'\n"
        "  bgrun run -s build -t 30min -p MemoryMax=2G -- make test\n"
        "  bgrun run --stdin --wait -- 'read x; echo got $x' <<< hello\n"
        "  bgrun run --tty --wait -- top\n"
        "  bgrun run --sandbox workspace --wait -- make test\n"
        "  for t in shard-*; do bgrun run -s ci --queue --parallel 8 -- ./$t; done\n";

static const char status_details[] =
        "Show the job's record: status, exit code or signal, times, containment,\n"
        "teardown, and what it used (CPU time, memory peak) where bgrund tells.\n"
        "\n"
        "Options:\n"
        "     --json                 The record as JSON (keys as org.bgrun.Runtime1(5) lists)\n"
        "\n"
        "Examples:\n"
        "  bgrun status 7xk2p\n"
        "  bgrun status 7xk2p --json | jq .exit_code\n";

static const char logs_details[] =
        "Print the job's output (stdout and stderr together, as they came).\n"
        "\n"
        "Options:\n"
        "  -f --follow               Keep printing until the job ends\n"
        "  -n --lines=LINES          Only the last LINES lines (with -f, -n 0 starts at the end)\n"
        "     --offset=N             From byte N of what the job wrote (with -f too)\n"
        "     --plain                Without a terminal's control sequences (--tty jobs):\n"
        "                            no colours, CR LF as LF, a rewritten line as last shown\n"
        "     --json                 With --offset: {\"data\", \"offset\", \"next\", \"complete\"}:\n"
        "                            the output there is now (invalid UTF-8 replaced by\n"
        "                            U+FFFD), next the offset to ask for next time (in the\n"
        "                            job's bytes), complete once the job ended and all is read\n"
        "\n"
        "Examples:\n"
        "  bgrun logs 7xk2p -n 20\n"
        "  bgrun logs -f -n 0 7xk2p\n"
        "  bgrun logs 7xk2p --offset 4096 --json | jq -r .next\n";

static const char attach_details[] =
        "Attach this terminal to a running --tty job again, as run --tty --wait did:\n"
        "its output from now on (^L or a key redraws most programs), this input to it.\n"
        "^] three times within 1s detaches again; the job runs on.\n"
        "\n"
        "Examples:\n"
        "  id=$(bgrun run --tty -- bash)\n"
        "  bgrun attach $id\n";

static const char stop_details[] =
        "End jobs gracefully: their StopSignal (SIGTERM unless launched otherwise) to\n"
        "every process, then, after the grace (StopGraceUSec=, 5s unless launched\n"
        "otherwise), cgroup.kill. Returns once nothing of them is left alive.\n"
        "\n"
        "Options:\n"
        "     --signal=SIGNAL        Send SIGNAL (INT, SIGINT, 2) instead\n"
        "     --grace=DURATION       Wait DURATION before killing (0: at once)\n"
        "     --json                 Print bgrund's answer as JSON\n"
        "\n"
        "Examples:\n"
        "  bgrun stop 7xk2p\n"
        "  bgrun stop 7xk2p q9m3d --signal INT --grace 30s\n";

static const char kill_details[] =
        "End jobs at once (cgroup.kill) with everything they started, and confirm\n"
        "that nothing of them is left alive.\n"
        "\n"
        "Options:\n"
        "     --session=SESSION      Kill every running job of yours in SESSION\n"
        "                            (no short form: -s is a signal in systemctl kill;\n"
        "                            with no ID, default: $BGRUN_SESSION)\n"
        "     --json                 Print bgrund's answer as JSON\n"
        "\n"
        "Examples:\n"
        "  bgrun kill 7xk2p q9m3d\n"
        "  bgrun kill --session build\n";

static const char send_details[] =
        "Write TEXT and a newline to the standard input of a job started with --stdin,\n"
        "--open-stdin or --tty; --eof ends its input (on a terminal, the EOF character).\n"
        "\n"
        "Options:\n"
        "  -n                        No newline after TEXT\n"
        "     --eof                  End the input (after TEXT, if given)\n"
        "\n"
        "Examples:\n"
        "  id=$(bgrun run --open-stdin -- 'while read l; do echo \"got $l\"; done')\n"
        "  bgrun send $id hello\n"
        "  bgrun send $id --eof\n";

static const char list_details[] =
        "List the jobs you may see: ID, session, status, EXIT (the exit code, the\n"
        "signal's name, or -), RUNTIME and command.\n"
        "\n"
        "Options:\n"
        "  -s --session=SESSION      Only the jobs of SESSION (default: $BGRUN_SESSION)\n"
        "     --status=STATUS        Only the jobs in STATUS: running, exited, killed,\n"
        "                            timed_out, failed\n"
        "     --json                 A JSON array; each row with exit_code, started_at and\n"
        "                            finished_at too (one Get per job, sent together)\n"
        "\n"
        "Examples:\n"
        "  bgrun list\n"
        "  bgrun list --status running --json | jq -r '.[].id'\n"
        "  bgrun ls -s build --json | jq -r '.[].id'\n";

static const char wait_details[] =
        "Wait for jobs to end, and say how each ended. Exits with the job's status\n"
        "(128+N for signal N, 124 on timeout); of several, the first that failed (in\n"
        "the order given), and each that failed is named on stderr.\n"
        "\n"
        "Options:\n"
        "  -t --timeout=DURATION     Give up after DURATION (exit status 246 if one runs on)\n"
        "     --any                  Return when the first of them ends\n"
        "     --json                 Print the record (of several: an array) as JSON\n"
        "\n"
        "Examples:\n"
        "  bgrun wait 7xk2p\n"
        "  bgrun wait 7xk2p q9m3d --any -t 10min\n";

static const char forget_details[] =
        "Remove ended jobs' records and output.\n"
        "\n"
        "Options:\n"
        "     --ended                Every ended job of yours, not other users' (instead\n"
        "                            of IDs)\n"
        "  -s --session=SESSION      With --ended: only those of SESSION (default:\n"
        "                            $BGRUN_SESSION)\n"
        "     --older-than=DURATION  With --ended: only those that ended longer ago\n"
        "\n"
        "Examples:\n"
        "  bgrun forget 7xk2p\n"
        "  bgrun forget --ended -s build --older-than 1h\n";

static const char reap_details[] =
        "Re-check every job as bgrund does at start: keep those whose supervisor it\n"
        "verifies, release the containment of the others (admin only).\n"
        "\n"
        "Options:\n"
        "     --json                 Print the counts as JSON\n";

static const char mcp_details[] =
        "Serve bgrund's API as Model Context Protocol tools on stdin and stdout, for\n"
        "an AI agent: run, output, write_input, wait, stop, kill, status, list, forget.\n"
        "Nothing but protocol goes to stdout; logs go to stderr. The jobs go into\n"
        "SESSION and are stopped when the agent goes away (end of input, SIGTERM,\n"
        "SIGINT, SIGHUP, even SIGKILL of this server); their records stay.\n"
        "\n"
        "Options:\n"
        "  -s --session=SESSION      The jobs' session (default: mcp- and a random suffix)\n"
        "     --keep-jobs            Leave the jobs running when the agent goes away\n"
        "     --output-limit=BYTES   Output per result (default 16K; K, M: powers of 1024)\n"
        "     --sandbox=PROFILE      Run every command in this sandbox at least (workspace,\n"
        "                            read-only; see run): a call may ask for more, never\n"
        "                            less, and the tools act only on this server's jobs\n"
        "     --network              Let the sandboxed runs keep the network\n"
        "     --allow-domain=NAME    Let the sandboxed runs reach NAME over HTTP(S), and\n"
        "                            nothing else (repeatable; a call cannot add one)\n"
        "     --workspace=DIR        The directory workspace runs may write (default: the\n"
        "                            current one), whatever cwd a call gives; a call\n"
        "                            without cwd runs there, a relative cwd is from there\n"
        "     --writable=DIR         Another directory workspace runs may write (repeatable;\n"
        "                            never /, the home directory or a parent of it)\n"
        "     --no-protect-git       Leave git's hooks and config writable (ProtectGit=no)\n"
        "\n"
        "A call to bgrund past the deadline (--call-timeout) is the tool's error.\n"
        "\n"
        "Examples:\n"
        "  claude mcp add bgrun -- bgrun mcp\n"
        "  bgrun --user mcp --keep-jobs\n"
        "  claude mcp add bgrun -- bgrun mcp --sandbox workspace --workspace ~/src/app\n";

static const char help_details[] =
        "Show the list of verbs, or one verb's options and examples.\n"
        "\n"
        "Examples:\n"
        "  bgrun help\n"
        "  bgrun help run\n";

/* The verbs whose code sits above this library, handed in by the program
 * (bgrun mcp: mcp/ calls the CLI, never the other way round). */
static struct {
        VerbFlag flag;
        VerbDispatch dispatch;
} external_verbs[1];

void verb_table_provide(VerbFlag flag, VerbDispatch dispatch) {
        for (size_t i = 0; i < ELEMENTSOF(external_verbs); i++)
                if (!external_verbs[i].dispatch || external_verbs[i].flag == flag) {
                        external_verbs[i].flag = flag;
                        external_verbs[i].dispatch = dispatch;
                        return;
                }
}

static int verb_external(sd_bus *bus, const Args *args) {
        for (size_t i = 0; i < ELEMENTSOF(external_verbs); i++)
                if (external_verbs[i].dispatch && external_verbs[i].flag == args->verb->flag)
                        return external_verbs[i].dispatch(bus, args);
        return log_error_errno(-EOPNOTSUPP, "bgrun %s is not part of this program.", args->verb->name);
}

static const Verb verbs[] = {
        { "run", VERB_RUN, 2, VERB_ANY, "Missing the command to run: bgrun run [OPTIONS] -- COMMAND...", check_run,
          verb_run, "run [OPTIONS...] -- COMMAND...", "Start COMMAND as a background job, print its ID", run_details },
        { "status", VERB_STATUS, 2, 2, NULL, NULL, verb_status,
          "status ID [--json]", "Show the job's record (alias: show)", status_details },
        { "show", VERB_STATUS, 2, 2, NULL, NULL, verb_status, "show ID [--json]", NULL, status_details },
        { "logs", VERB_LOGS, 2, 2, NULL, check_logs, verb_logs,
          "logs ID [-f] [-n LINES] [--offset N] [--plain] [--json]", "Print the job's output (stdout and stderr)",
          logs_details },
        { "attach", VERB_ATTACH, 2, 2, NULL, NULL, verb_attach,
          "attach ID", "The terminal of a --tty job, again (as run --tty --wait)", attach_details },
        { "stop", VERB_STOP, 2, VERB_ANY, NULL, NULL, verb_stop,
          "stop ID... [--signal SIGNAL] [--grace DURATION]", "End jobs gracefully: a signal, a grace, then kill",
          stop_details },
        { "kill", VERB_KILL, 1, VERB_ANY, NULL, check_kill, verb_kill,
          "kill ID... | --session SESSION [--json]", "End jobs at once with everything they started", kill_details },
        { "send", VERB_SEND, 2, 3, "Missing job ID: bgrun send ID TEXT | send ID --eof", check_send, verb_send,
          "send ID TEXT | send ID --eof", "Write to the input of a --stdin, --open-stdin or --tty job", send_details },
        { "list", VERB_LIST, 1, 1, NULL, check_list, verb_list,
          "list [-s SESSION] [--status STATUS] [--json]", "List jobs (alias: ls)", list_details },
        { "ls", VERB_LIST, 1, 1, NULL, check_list, verb_list, "ls [-s SESSION] [--status STATUS] [--json]", NULL,
          list_details },
        { "wait", VERB_WAIT, 2, VERB_ANY, NULL, NULL, verb_wait,
          "wait ID... [-t DURATION] [--any] [--json]", "Wait for jobs to end", wait_details },
        { "forget", VERB_FORGET, 1, VERB_ANY, NULL, check_forget, verb_forget,
          "forget ID... | --ended [-s SESSION] [--older-than DURATION]",
          "Remove ended jobs' records and output", forget_details },
        { "reap", VERB_REAP, 1, 1, NULL, NULL, verb_reap, "reap [--json]",
          "Re-check all jobs, as bgrund does at start (admin)", reap_details },
        { "mcp", VERB_MCP, 1, 1, NULL, NULL, verb_external, "mcp [-s SESSION] [--keep-jobs] [--output-limit BYTES] [--sandbox PROFILE [--network | --allow-domain NAME...] [--workspace DIR] [--writable DIR...] [--no-protect-git]]",
          "Serve the API as MCP tools to an AI agent (stdio)", mcp_details },
        { "help", VERB_HELP, 1, 2, NULL, NULL, NULL, "help [VERB]", "Show this help, or a verb's", help_details },
};

/* The usage line and the verbs, what both helps begin with. */
static void print_commands(FILE *f) {
        fprintf(f, "bgrun [OPTIONS...] COMMAND ...\n"
                   "\n"
                   "Run commands as background jobs of bgrund, and look after them.\n"
                   "\n"
                   "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (verbs[i].summary)
                        fprintf(f, "  %-30s %s\n", verbs[i].name, verbs[i].summary);
}

void print_short_help(FILE *f) {
        print_commands(f);
        fprintf(f, "\nSee 'bgrun help VERB' for a verb's options and examples, 'bgrun --help' for all.\n");
}

void print_help(void) {
        print_commands(stdout);
        printf("\n"
               "Options:\n"
               "  -h --help                      Show this help ('bgrun help VERB': a verb's)\n"
               "     --version                   Show the version\n"
               "     --system                    Talk to the system bgrund (the default)\n"
               "     --user                      Talk to your own bgrund --user\n"
               "  -H --host=[USER@]HOST          Talk to HOST's system bgrund over ssh\n"
               "     --address=ADDRESS           Talk to bgrund at a D-Bus ADDRESS (a bus, or\n"
               "                                 bgrund --listen's socket: unix:path=/run/bgrun/bus)\n"
               "     --call-timeout=DURATION     The deadline of each call to bgrund (default 30s);\n"
               "                                 waiting verbs wait as long as asked, yet end\n"
               "                                 within it once bgrund stops answering\n"
               "\n"
               "See 'bgrun help VERB' (or 'bgrun VERB --help') for a verb's options and examples.\n"
               "\n"
               "DURATION reads like systemd's: 90, 90s, 500ms, 5min, 1h30min.\n"
               "\n"
               "Exit status: 0 success, 2 usage error, and bgrun's own outcomes:\n"
               "  240 no such job            244 containment refused\n"
               "  241 bad input (InvalidArgs) 245 bgrund not reachable, or not answering in time\n"
               "  242 access denied          246 wait -t: a job still running\n"
               "  243 a limit                247 any other failure\n"
               "run --wait and wait exit with the job's exit status (128+N if signal N ended\n"
               "it, 124 if it timed out); a job may exit with any number, so there --json's\n"
               "\"error\" is the certain way to tell. With --json, an error is one JSON object on\n"
               "stdout: {\"error\": \"NoSuchJob\", \"message\": \"...\"}.\n"
               "\n"
               "Environment: BGRUN_ADDRESS, like --address; BGRUN_CALL_TIMEOUT, like\n"
               "--call-timeout. With no bus at all, bgrun uses bgrund --listen's default socket.\n");
}

void print_verb_help(const Verb *verb) {
        printf("bgrun %s\n\n%s", verb->synopsis, verb->details);
        if (verb->dispatch)
                printf("\nGlobal options (before the verb): --system, --user, -H [USER@]HOST, --address ADDRESS,\n"
                       "--call-timeout DURATION; exit status: see 'bgrun help'.\n");
}

const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

