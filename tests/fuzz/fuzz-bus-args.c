/* SPDX-License-Identifier: MIT */
/* bus-args.c: the readers bgrund's handlers call first on what any caller
 * sends, on real sd-bus method calls built from the input (the types and
 * the values both), sealed and rewound as if received.
 *
 * Input:
 *   R      which reader: R & 1 Launch's options, else Stop's
 *   N      entries in the a{sv} (N % 8), each
 *     K    key: K < 0x80 is one of KEYS[K % n], else a STRING follows
 *     TYPE the variant's type, generated: a byte per type code, containers
 *          nest up to DEPTH_MAX (sd-bus's own limits apply past that)
 *     VALUE for that type: fixed-size values from the bytes; a STRING for
 *          s; an array a count byte (C & 0x80: a 2-byte count, for arrays
 *          past any bound, whose later elements repeat when the input runs
 *          out) and its elements
 * where STRING is a length byte and that many bytes, made printable ASCII.
 *
 * Checked: a reader returns >= 0 with options within their bounds (the
 * environment at most 1,024 entries and 128 KiB, each NAME=VALUE), or < 0,
 * with an InvalidArgs error whenever it set one; nothing leaks
 * (LeakSanitizer), nothing reads out of bounds (AddressSanitizer). */
#include <errno.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "bgrun/bus-api.h"
#include "bus-args.h"
#include "fuzz.h"
#include "macro.h"

#define DEPTH_MAX 6
#define SIGNATURE_MAX 64

static const char *const KEYS[] = {
        "MaxRuntimeUSec", "Environment", "MemoryMax", "TasksMax", "CPUQuotaPerSecUSec", "User", "StopSignal",
        "StopGraceUSec", "Stdin", "Tty", "TtyRows", "TtyColumns", "Signal", "GraceUSec",
};

typedef struct Reader {
        const uint8_t *p;
        size_t left;
} Reader;

static unsigned byte(Reader *r) {
        if (r->left == 0)
                return 0;
        r->left--;
        return *r->p++;
}

static void string(Reader *r, char buf[static 256]) {
        size_t n = byte(r);
        for (size_t i = 0; i < n; i++)
                buf[i] = (char) (32 + byte(r) % 95);
        buf[n] = 0;
}

/* One complete type at *sig, at most SIGNATURE_MAX long in all. */
static bool gen_type(Reader *r, char *sig, size_t *len, unsigned depth) {
        static const char basic[] = "ybnqiuxtdsog";
        if (*len + 4 >= SIGNATURE_MAX)
                return false;
        unsigned b = byte(r) % (depth < DEPTH_MAX ? 16 : 12);
        if (b < 12) {
                sig[(*len)++] = basic[b];
                return true;
        }
        switch (b) {
        case 12:
                sig[(*len)++] = 'v';
                return true;
        case 13:
                sig[(*len)++] = 'a';
                return gen_type(r, sig, len, depth + 1);
        case 14:
                sig[(*len)++] = 'a';
                sig[(*len)++] = '{';
                sig[(*len)++] = basic[byte(r) % 12];
                if (!gen_type(r, sig, len, depth + 1) || *len + 1 >= SIGNATURE_MAX)
                        return false;
                sig[(*len)++] = '}';
                return true;
        default: {
                sig[(*len)++] = '(';
                unsigned n = 1 + byte(r) % 3;
                for (unsigned i = 0; i < n; i++)
                        if (!gen_type(r, sig, len, depth + 1))
                                return false;
                if (*len + 1 >= SIGNATURE_MAX)
                        return false;
                sig[(*len)++] = ')';
                return true;
        }
        }
}

/* The end of the complete type starting at t. */
static const char *type_end(const char *t) {
        if (*t == 'a')
                return type_end(t + 1);
        if (*t == '(' || *t == '{') {
                char close = *t == '(' ? ')' : '}';
                t++;
                while (*t != close)
                        t = type_end(t);
                return t + 1;
        }
        return t + 1;
}

static int gen_value(sd_bus_message *m, Reader *r, const char *t, unsigned depth);

static int gen_basic(sd_bus_message *m, Reader *r, char type) {
        char s[256];
        uint64_t x = 0;
        switch (type) {
        case 's':
                string(r, s);
                return sd_bus_message_append_basic(m, 's', s);
        case 'o':
                return sd_bus_message_append_basic(m, 'o', byte(r) & 1 ? "/org/bgrun" : "/");
        case 'g':
                return sd_bus_message_append_basic(m, 'g', byte(r) & 1 ? "a{sv}" : "");
        case 'd': {
                double d = (double) byte(r);
                return sd_bus_message_append_basic(m, 'd', &d);
        }
        case 'b': {
                int b = byte(r) & 1;
                return sd_bus_message_append_basic(m, 'b', &b);
        }
        default:
                for (unsigned i = 0; i < 8; i++)
                        x = x << 8 | byte(r);
                return sd_bus_message_append_basic(m, type, &x); /* little endian: its low bytes */
        }
}

static int gen_value(sd_bus_message *m, Reader *r, const char *t, unsigned depth) {
        const char *end = type_end(t);
        char inner[SIGNATURE_MAX + 8];
        int k;
        switch (*t) {
        case 'a': {
                size_t n = (size_t) (end - t - 1);
                memcpy(inner, t + 1, n);
                inner[n] = 0;
                unsigned c = byte(r);
                unsigned count = c & 0x80 ? (byte(r) | byte(r) << 8) % 2048 : c % 4;
                k = sd_bus_message_open_container(m, 'a', inner);
                for (unsigned i = 0; k >= 0 && i < count; i++) {
                        if (inner[0] == '{') {
                                size_t en = strlen(inner) - 2;
                                char e[SIGNATURE_MAX + 8];
                                memcpy(e, inner + 1, en);
                                e[en] = 0;
                                k = sd_bus_message_open_container(m, 'e', e);
                                if (k >= 0)
                                        k = gen_basic(m, r, e[0]);
                                if (k >= 0)
                                        k = gen_value(m, r, e + 1, depth + 1);
                                if (k >= 0)
                                        k = sd_bus_message_close_container(m);
                        } else
                                k = gen_value(m, r, inner, depth + 1);
                }
                return k >= 0 ? sd_bus_message_close_container(m) : k;
        }
        case '(': {
                size_t n = (size_t) (end - t - 2);
                memcpy(inner, t + 1, n);
                inner[n] = 0;
                k = sd_bus_message_open_container(m, 'r', inner);
                for (const char *p = inner; k >= 0 && *p; p = type_end(p))
                        k = gen_value(m, r, p, depth + 1);
                return k >= 0 ? sd_bus_message_close_container(m) : k;
        }
        case 'v': {
                char sig[SIGNATURE_MAX + 8];
                size_t len = 0;
                if (depth >= DEPTH_MAX * 2 || !gen_type(r, sig, &len, depth))
                        strcpy(sig, "t"), len = 1;
                sig[len] = 0;
                k = sd_bus_message_open_container(m, 'v', sig);
                if (k >= 0)
                        k = gen_value(m, r, sig, depth + 1);
                return k >= 0 ? sd_bus_message_close_container(m) : k;
        }
        default:
                return gen_basic(m, r, *t);
        }
}

static sd_bus *bus;

static void bus_setup(void) {
        int s[2];
        if (bus)
                return;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0 || sd_bus_new(&bus) < 0 ||
            sd_bus_set_fd(bus, s[0], s[0]) < 0 || sd_bus_start(bus) < 0)
                abort();
        /* s[1] stays open for the process's life: the bus never talks. */
}

static void check_options(const LaunchOptions *o) {
        size_t n = 0, bytes = 0;
        for (char *const *e = o->spec.environment; e && *e; e++, n++) {
                FUZZ_CHECK(strchr(*e, '='), "entry %zu without '='", n);
                bytes += strlen(*e) + 1;
        }
        FUZZ_CHECK(n <= LAUNCH_ENVIRONMENT_MAX_ENTRIES, "%zu entries", n);
        FUZZ_CHECK(bytes <= LAUNCH_ARRAY_MAX_BYTES, "%zu bytes", bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Reader r = { data, size };
        bus_setup();
        bool launch = byte(&r) & 1;

        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        if (sd_bus_message_new_method_call(bus, &m, BGRUN_BUS_NAME, "/org/bgrun/Runtime1",
                                           "org.bgrun.Runtime1.Manager", launch ? "Launch" : "Stop") < 0)
                abort();
        unsigned n = byte(&r) % 8;
        int k = sd_bus_message_open_container(m, 'a', "{sv}");
        for (unsigned i = 0; k >= 0 && i < n; i++) {
                char key[256], sig[SIGNATURE_MAX + 8];
                size_t len = 0;
                unsigned kb = byte(&r);
                if (kb < 0x80)
                        snprintf(key, sizeof key, "%s", KEYS[kb % ELEMENTSOF(KEYS)]);
                else
                        string(&r, key);
                if (!gen_type(&r, sig, &len, 0))
                        return 0;
                sig[len] = 0;
                k = sd_bus_message_open_container(m, 'e', "sv");
                if (k >= 0)
                        k = sd_bus_message_append_basic(m, 's', key);
                if (k >= 0)
                        k = sd_bus_message_open_container(m, 'v', sig);
                if (k >= 0)
                        k = gen_value(m, &r, sig, 1);
                if (k >= 0)
                        k = sd_bus_message_close_container(m);
                if (k >= 0)
                        k = sd_bus_message_close_container(m);
        }
        if (k >= 0)
                k = sd_bus_message_close_container(m);
        if (k < 0 || sd_bus_message_seal(m, 1, 0) < 0 || sd_bus_message_rewind(m, true) < 0)
                return 0; /* not a message sd-bus would send */

        _cleanup_(launch_options_done) LaunchOptions o = {};
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int ret = launch ? bus_read_launch_options(m, &o, &error) : bus_read_stop_options(m, &o, &error);
        if (ret >= 0) {
                FUZZ_CHECK(!sd_bus_error_is_set(&error), "an error set on success: %s", error.name);
                check_options(&o);
        } else if (sd_bus_error_is_set(&error))
                FUZZ_CHECK(streq(error.name, BGRUN_ERROR_INVALID_ARGS) && error.message, "%s", error.name);
        return 0;
}
