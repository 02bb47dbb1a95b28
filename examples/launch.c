/* SPDX-License-Identifier: MIT */
/* A client of org.bgrun.Runtime1 with sd-bus and nothing else: launch a
 * command, copy its output to stdout until it has ended, and exit with its
 * exit status (128+N after signal N, 124 after its time limit).
 *
 *   launch COMMAND [SESSION]
 *
 * Talks to the system bus, or the bus in DBUS_SYSTEM_BUS_ADDRESS.
 * Build: cc -o launch launch.c $(pkg-config --cflags --libs libsystemd) */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#define BUS_NAME "org.bgrun.Runtime1"
#define MANAGER_PATH "/org/bgrun/Runtime1"
#define MANAGER_INTERFACE "org.bgrun.Runtime1.Manager"

/* Freed when it goes out of scope, as systemd's own code does it. */
#define _cleanup_(f) __attribute__((cleanup(f)))

typedef struct Record {
        char *status;
        int32_t exit_code;
        int32_t signal;
} Record;

static void record_done(Record *r) {
        free(r->status);
}

/* Launch COMMAND with a one-hour limit; *ret_id is the job's id. */
static int launch(sd_bus *bus, const char *command, const char *session, char **ret_id, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char cwd[4096];
        const char *id;
        int r;

        if (!getcwd(cwd, sizeof cwd))
                return -errno;
        /* Launch options are a{sv}: each value in a variant of its own type. */
        r = sd_bus_call_method(bus, BUS_NAME, MANAGER_PATH, MANAGER_INTERFACE, "Launch", error, &reply,
                               "sssa{sv}", command, session, cwd,
                               1, "MaxRuntimeUSec", "t", (uint64_t) 3600 * 1000000);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "so", &id, NULL);
        if (r < 0)
                return r;
        *ret_id = strdup(id);
        return *ret_id ? 0 : -ENOMEM;
}

/* Copy the job's output to stdout until it has ended and all was read. */
static int follow_output(sd_bus *bus, const char *id, sd_bus_error *error) {
        uint64_t offset = 0;
        int complete = 0;

        while (!complete) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                const void *data;
                size_t size;
                int r;

                r = sd_bus_call_method(bus, BUS_NAME, MANAGER_PATH, MANAGER_INTERFACE, "ReadOutput", error,
                                       &reply, "stu", id, offset, (uint32_t) 65536);
                if (r < 0)
                        return r;
                r = sd_bus_message_read_array(reply, 'y', &data, &size);
                if (r >= 0)
                        r = sd_bus_message_read(reply, "tb", &offset, &complete);
                if (r < 0)
                        return r;
                if (size > 0 && fwrite(data, 1, size, stdout) != size)
                        return -EIO;
                fflush(stdout);
                if (size == 0 && !complete)
                        usleep(100 * 1000); /* nothing new yet: ask again shortly */
        }
        return 0;
}

/* The keys of the record this program needs; the others are skipped. */
static int get_record(sd_bus *bus, const char *id, Record *ret, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Record rec = { .exit_code = -1 };
        int r;

        r = sd_bus_call_method(bus, BUS_NAME, MANAGER_PATH, MANAGER_INTERFACE, "Get", error, &reply, "s", id);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key, *s;

                r = sd_bus_message_read(reply, "s", &key);
                if (r < 0)
                        break;
                if (strcmp(key, "status") == 0) {
                        r = sd_bus_message_read(reply, "v", "s", &s);
                        if (r >= 0 && !(rec.status = strdup(s)))
                                r = -ENOMEM;
                } else if (strcmp(key, "exit_code") == 0)
                        r = sd_bus_message_read(reply, "v", "i", &rec.exit_code);
                else if (strcmp(key, "signal") == 0)
                        r = sd_bus_message_read(reply, "v", "i", &rec.signal);
                else
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r < 0)
                        break;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(reply);
        if (r >= 0 && !rec.status)
                r = -EBADMSG;
        if (r < 0) {
                record_done(&rec);
                return r;
        }
        *ret = rec;
        return 0;
}

int main(int argc, char *argv[]) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Record rec = {};
        char *id = NULL;
        int r, status;

        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: %s COMMAND [SESSION]\n", argv[0]);
                return 2;
        }

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                fprintf(stderr, "Cannot connect to the system bus: %s\n", strerror(-r));
                return 1;
        }
        r = launch(bus, argv[1], argc > 2 ? argv[2] : "", &id, &error);
        if (r >= 0) {
                fprintf(stderr, "Running as job %s\n", id);
                r = follow_output(bus, id, &error);
        }
        if (r >= 0)
                r = get_record(bus, id, &rec, &error);
        if (r < 0) {
                /* A D-Bus error names itself; anything else is an errno. */
                if (sd_bus_error_is_set(&error))
                        fprintf(stderr, "%s: %s\n", error.name, error.message);
                else
                        fprintf(stderr, "Failed: %s\n", strerror(-r));
                free(id);
                return 1;
        }

        printf("job %s: %s, exit code %" PRIi32 ", signal %" PRIi32 "\n", id, rec.status, rec.exit_code, rec.signal);
        if (strcmp(rec.status, "timed_out") == 0)
                status = 124;
        else if (rec.signal > 0)
                status = 128 + rec.signal;
        else
                status = rec.exit_code >= 0 ? rec.exit_code : 1;
        record_done(&rec);
        free(id);
        return status;
}
