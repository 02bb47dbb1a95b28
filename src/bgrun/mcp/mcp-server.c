/* SPDX-License-Identifier: MIT */
/* The loop of bgrun mcp: stdin read as it comes, stdout written as it
 * takes it (mcp-session.c queues it), bgrund's answers, and the end: input closed or a signal, then this server's running jobs
 * stopped (unless --keep-jobs) before it exits. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "bgrun/bus-api.h"
#include "deadline.h"
#include "json-util.h"
#include "launch-options.h"
#include "log.h"
#include "manager-call.h"
#include "mcp-call.h"
#include "mcp-output.h"
#include "mcp-sandbox.h"
#include "mcp-server.h"
#include "time-util.h"

#define READ_CHUNK 65536
/* Stops at the end in flight at once: within what the bus daemon lets a
 * connection await, whatever the number of jobs. */
#define STOPS_IN_FLIGHT_MAX 32U

static int on_output_broken(sd_event_source *source, void *userdata) {
        mcp_end(userdata, EXIT_SUCCESS);
        return 0;
}

static int on_output(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        mcp_flush_output(userdata);
        return 0;
}

static int on_input(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        McpServer *s = userdata;
        char buf[READ_CHUNK];
        ssize_t k;
        int r;

        k = read(STDIN_FILENO, buf, sizeof buf);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k < 0) {
                log_error_errno(errno, "Failed to read stdin: %m");
                mcp_end(s, EXIT_FAILURE);
                return 0;
        }
        if (k == 0) {
                (void) line_reader_finish(&s->reader, mcp_handle_line, s);
                log_debug("End of input: the client went away.");
                mcp_end(s, EXIT_SUCCESS);
                return 0;
        }
        r = line_reader_feed(&s->reader, buf, (size_t) k, mcp_handle_line, s);
        if (r < 0) {
                log_error_errno(r, "Failed to read a message: %m");
                mcp_end(s, EXIT_FAILURE);
        }
        return 0;
}

static int on_input_file(sd_event_source *source, void *userdata) {
        return on_input(source, STDIN_FILENO, EPOLLIN, userdata);
}

static int on_signal(sd_event_source *source, const struct signalfd_siginfo *si, void *userdata) {
        log_debug("Got %s: stopping.", strsignal((int) si->ssi_signo));
        mcp_end(userdata, 128 + (int) si->ssi_signo);
        return 0;
}

static void finish(McpServer *s) {
        int flags;

        /* What is queued goes out before the exit, however slow the reader. */
        flags = fcntl(STDOUT_FILENO, F_GETFL);
        if (flags >= 0)
                (void) fcntl(STDOUT_FILENO, F_SETFL, flags & ~O_NONBLOCK);
        mcp_flush_output(s);
        (void) sd_event_exit(s->event, s->exit_status);
}

static void stop_next(McpServer *s);

static int on_stop_answer(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        McpServer *s = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (e && !sd_bus_error_has_name(e, BGRUN_ERROR_NO_SUCH_JOB))
                log_error("Failed to stop a job at the end: %s", e->message ?: e->name);
        s->stops_pending--;
        stop_next(s);
        if (s->stops_pending == 0)
                finish(s);
        return 0;
}

/* The jobs' Stops, a window of them at a time, the next as one answers. */
static void stop_next(McpServer *s) {
        while (s->next_stop < s->n_stops && s->stops_pending < STOPS_IN_FLIGHT_MAX) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                const char *id = s->stops[s->next_stop++];
                int r;

                r = sd_bus_message_new_method_call(s->bus, &m, BGRUN_BUS_NAME, BGRUN_MANAGER_PATH,
                                                   BGRUN_MANAGER_INTERFACE, "Stop");
                if (r >= 0)
                        r = sd_bus_message_append(m, "sa{sv}", id, 0);
                if (r >= 0)
                        r = sd_bus_call_async(s->bus, NULL, m, on_stop_answer, s, call_timeout(CALL_TIMEOUT_STOP));
                if (r < 0) {
                        log_error_errno(r, "Failed to stop job %s: %m", id);
                        continue;
                }
                log_debug("Stopping job %s.", id);
                s->stops_pending++;
        }
}

static void stop_jobs(McpServer *s) {
        size_t n = (size_t) json_object_object_length(s->jobs);
        s->stops = calloc(n + 1, sizeof(char *));
        if (!s->stops) {
                log_oom();
                return;
        }
        json_object_object_foreach(s->jobs, id, unused) {
                (void) unused;
                if ((s->stops[s->n_stops] = strdup(id)))
                        s->n_stops++;
        }
        stop_next(s);
}

void mcp_end(McpServer *s, int status) {
        if (s->ending)
                return;
        s->ending = true;
        s->exit_status = status;
        s->input_source = sd_event_source_disable_unref(s->input_source);
        /* Pending calls get no answer: the client is gone or going. (Their
         * calls in flight are forgotten; the queued ones never go.) */
        while (s->calls)
                mcp_call_free(s->calls);
        mcp_watch_free(s);
        if (!s->options.keep_jobs)
                stop_jobs(s);
        if (s->stops_pending == 0)
                finish(s);
}

static int random_session(char **ret) {
        static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
        uint8_t bytes[6];
        char suffix[sizeof bytes + 1];

        if (getrandom(bytes, sizeof bytes, 0) != sizeof bytes)
                return -errno;
        for (size_t i = 0; i < sizeof bytes; i++)
                suffix[i] = alphabet[bytes[i] % (sizeof alphabet - 1)];
        suffix[sizeof bytes] = '\0';
        return asprintf(ret, "mcp-%s", suffix) < 0 ? -ENOMEM : 0;
}

static int set_nonblocking(int fd) {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

static int setup_io(McpServer *s) {
        int r;

        (void) set_nonblocking(STDIN_FILENO);
        r = sd_event_add_io(s->event, &s->input_source, STDIN_FILENO, EPOLLIN, on_input, s);
        if (r == -EPERM) {
                /* A file (or /dev/null): always readable, so read it in
                 * each loop iteration until its end. */
                r = sd_event_add_defer(s->event, &s->input_source, on_input_file, s);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s->input_source, SD_EVENT_ON);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to watch stdin: %m");

        /* Enabled by mcp_flush_output() when the client is gone. */
        r = sd_event_add_defer(s->event, &s->output_broken_source, on_output_broken, s);
        if (r >= 0)
                r = sd_event_source_set_enabled(s->output_broken_source, SD_EVENT_OFF);
        if (r < 0)
                return log_error_errno(r, "Failed to prepare for stdout's end: %m");

        (void) set_nonblocking(STDOUT_FILENO);
        r = sd_event_add_io(s->event, &s->output_source, STDOUT_FILENO, EPOLLOUT, on_output, s);
        if (r == -EPERM)
                return 0; /* a file: writes never wait, no source needed */
        if (r < 0)
                return log_error_errno(r, "Failed to watch stdout: %m");
        return sd_event_source_set_enabled(s->output_source, SD_EVENT_OFF);
}

static void server_done(McpServer *s) {
        s->ending = true;
        while (s->calls)
                mcp_call_free(s->calls);
        mcp_watch_free(s);
        sd_event_source_disable_unref(s->dispatch);
        for (size_t i = 0; i < s->n_stops; i++)
                free(s->stops[i]);
        free(s->stops);
        mcp_output_drop(s);
        sd_event_source_disable_unref(s->input_source);
        sd_event_source_disable_unref(s->output_source);
        sd_event_source_disable_unref(s->output_broken_source);
        line_reader_done(&s->reader);
        json_object_put(s->cursors);
        json_object_put(s->jobs);
        free(s->sandbox_words);
        json_object_put(s->launched);
        free(s->protocol_version);
        free(s->session);
        if (s->bus)
                (void) sd_bus_detach_event(s->bus);
        sd_event_unref(s->event);
}

int mcp_serve(sd_bus *bus, const McpOptions *o) {
        _cleanup_(server_done) McpServer s = { .bus = bus, .options = *o };
        sigset_t mask;
        int r;

        if (!s.options.output_limit)
                s.options.output_limit = MCP_OUTPUT_LIMIT_DEFAULT;
        /* The CLI's deadline: --call-timeout, BGRUN_CALL_TIMEOUT, 30 s. */
        s.call_timeout_usec = call_deadline_usec();
        /* Bound jobs are stopped by bgrund when this server's connection
         * goes, even if it is killed outright; at a clean end it stops them
         * itself too, so that end does not depend on the binding. */
        s.bind_jobs = !o->keep_jobs;
        if (o->session)
                s.session = strdup(o->session);
        else if (random_session(&s.session) < 0)
                s.session = NULL;
        s.cursors = json_object_new_object();
        s.jobs = json_object_new_object();
        s.launched = json_object_new_object();
        s.sandbox_words = mcp_sandbox_describe(&s.options);
        if (!s.session || !s.cursors || !s.jobs || !s.launched || !s.sandbox_words)
                return log_oom();
        line_reader_init(&s.reader, 0);

        r = sd_event_default(&s.event);
        if (r < 0)
                return log_error_errno(r, "Failed to get an event loop: %m");
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        (void) signal(SIGPIPE, SIG_IGN);
        for (int sig = SIGHUP; sig <= SIGTERM; sig++)
                if (sigismember(&mask, sig)) {
                        r = sd_event_add_signal(s.event, NULL, sig, on_signal, &s);
                        if (r < 0)
                                return log_error_errno(r, "Failed to watch signal %d: %m", sig);
                }
        r = sd_bus_attach_event(bus, s.event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach the bus to the event loop: %m");
        /* bgrund's connection gone (a --listen socket that closed): nothing
         * more can be served. */
        (void) sd_bus_set_exit_on_disconnect(bus, true);
        r = setup_io(&s);
        if (r < 0)
                return r;
        r = mcp_calls_init(&s);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the calls' queue: %m");
        /* Waits then hold no call of their own; without it they wait in
         * Wait calls, as they can. */
        r = mcp_watch_start(&s);
        if (r < 0)
                log_debug_errno(r, "Cannot follow bgrund's signals: %m");

        log_debug("Serving MCP on stdio; jobs go into session %s%s.", s.session,
                  s.bind_jobs ? ", bound to this server" : "");
        r = sd_event_loop(s.event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        if (!s.ending) {
                log_error("Lost the connection to bgrund.");
                return EXIT_FAILURE;
        }
        return s.exit_status;
}
