/* SPDX-License-Identifier: MIT */
/* launch_options_set(): Launch's a{sv} from any caller on the system bus,
 * one entry at a time, as bgrund's D-Bus face hands them over.
 *
 * Input: a sequence of entries, each
 *   K      key: K < 0x80 is launch_options[K % n].name, else a STRING follows
 *   S      signature: S % 8 is 0 "t", 1 "s", 2 "as", 3 "u", 4 "i", 5 "q", 6 "b",
 *          7 a STRING follows
 *   value  for "t" 8 bytes (little endian), for "i" 4 (sign-extended), for "u" 4, for
 *          "q" 2, for "b" 1 (0 false, else true): as bgrund's D-Bus face
 *          widens them; for "s" a STRING, for "as" a 2-byte count (modulo
 *          ARRAY_MAX, a little past what Environment takes) and that many
 *          STRINGs (when the input runs out, the rest repeat the last one,
 *          so that big arrays cost few bytes), for any other signature
 *          nothing (no member is set); a signature given as a STRING that
 *          is one of these takes its value as above
 * where STRING is a 2-byte length (little endian, cut to what is left) and
 * its bytes (a NUL in them ends the C string early).
 *
 * Each entry is applied and checked against a model of the rules (known key,
 * not given before, the key's signature, t > 0, Environment of NAME=VALUE
 * within the limits, User non-empty and at most LAUNCH_USER_NAME_MAX): an
 * accepted entry is set exactly and its bit is seen; a rejected one is
 * -EINVAL with a short message and leaves the options as they were;
 * launch_options_done() frees everything (LeakSanitizer checks). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>

#include "fuzz.h"
#include "launch-options.h"
#include "macro.h"

#define ARRAY_MAX (LAUNCH_ENVIRONMENT_MAX_ENTRIES + 64)
#define ENTRIES_MAX 16

typedef struct Reader {
        const uint8_t *p;
        size_t left;
} Reader;

static unsigned read_byte(Reader *r) {
        if (r->left == 0)
                return 0;
        r->left--;
        return *r->p++;
}

static unsigned read_u16(Reader *r) {
        unsigned lo = read_byte(r);
        return lo | read_byte(r) << 8;
}

static char *read_string(Reader *r) {
        size_t n = read_u16(r);
        if (n > r->left)
                n = r->left;
        char *s = fuzz_strndup(r->p, n);
        r->p += n;
        r->left -= n;
        return s;
}

static bool env_name_ok(const char *e, size_t n) {
        if (n == 0 || (e[0] >= '0' && e[0] <= '9'))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!(e[i] == '_' || (e[i] >= 'A' && e[i] <= 'Z') || (e[i] >= 'a' && e[i] <= 'z') ||
                      (e[i] >= '0' && e[i] <= '9')))
                        return false;
        return true;
}

static bool model_environment_ok(char *const *l) {
        size_t n = 0, bytes = 0;
        for (; l[n]; n++) {
                const char *eq = strchr(l[n], '=');
                if (!eq || !env_name_ok(l[n], (size_t) (eq - l[n])))
                        return false;
                bytes += strlen(l[n]) + 1;
        }
        return n <= LAUNCH_ENVIRONMENT_MAX_ENTRIES && bytes <= LAUNCH_ARRAY_MAX_BYTES;
}

/* An absolute path, '-' for optional, with no "." or ".." component and
 * at most LAUNCH_PATH_MAX_BYTES: the model's own reading of the rule. */
static bool model_path_ok(const char *p) {
        if (p[0] == '-')
                p++;
        if (p[0] != '/' || strlen(p) > LAUNCH_PATH_MAX_BYTES)
                return false;
        for (const char *c = p; *c;) {
                while (*c == '/')
                        c++;
                size_t n = strcspn(c, "/");
                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                c += n;
        }
        return true;
}

/* An AllowedDomains entry, as the contract words it, written again here
 * (not domain-list.c's code): [*.]name[:port], the name's labels 1-63 of
 * [a-z0-9-] with no '-' at either end, the last not all digits, at most 253
 * bytes, two labels at least after "*.", a port 1-65535 without a leading 0. */
static bool model_domain_ok(const char *e) {
        bool wildcard = strncmp(e, "*.", 2) == 0;
        const char *name = e + (wildcard ? 2 : 0), *colon = strchr(name, ':');
        size_t len = colon ? (size_t) (colon - name) : strlen(name);
        if (colon) {
                const char *p = colon + 1;
                size_t digits = strspn(p, "0123456789");
                if (digits == 0 || digits > 5 || p[digits] || p[0] == '0' || atoi(p) > 65535)
                        return false;
        }
        if (len == 0 || len > 253)
                return false;
        size_t labels = 0, start = 0;
        bool numeric = false;
        for (size_t k = 0; k <= len; k++) {
                if (k < len && name[k] != '.')
                        continue;
                size_t n = k - start;
                if (n == 0 || n > 63 || name[start] == '-' || name[k - 1] == '-')
                        return false;
                numeric = true;
                for (size_t c = start; c < k; c++) {
                        char ch = name[c];
                        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
                                return false;
                        numeric = numeric && ch >= '0' && ch <= '9';
                }
                labels++;
                start = k + 1;
        }
        return !numeric && labels >= (wildcard ? 2 : 1);
}

static bool model_paths_ok(char *const *l) {
        size_t n = 0, bytes = 0;
        for (; l[n]; n++) {
                if (!model_path_ok(l[n]))
                        return false;
                bytes += strlen(l[n]) + 1;
        }
        return n >= 1 && n <= LAUNCH_PATHS_MAX && bytes <= LAUNCH_ARRAY_MAX_BYTES;
}

/* One of the words, or, where they are no and yes first, systemd's other
 * booleans. */
static bool model_word_ok(const char *w, const char *const *words) {
        static const char *const booleans[] = { "false", "off", "0", "true", "on", "1" };
        for (size_t k = 0; words[k]; k++)
                if (strcmp(w, words[k]) == 0)
                        return true;
        for (size_t k = 0; k < ELEMENTSOF(booleans); k++)
                if (strcmp(w, booleans[k]) == 0)
                        return true;
        return false;
}

static bool model_accepts(const LaunchOptions *o, int i, const LaunchValue *v) {
        if (i < 0 || (o->seen & LAUNCH_OPTION_BIT(i)) || strcmp(v->signature, launch_options[i].signature) != 0)
                return false;
        if (i == LAUNCH_OPTION_STOP_GRACE_USEC)
                return v->u64 <= 600ULL * 1000000ULL; /* 10 min */
        if (strcmp(v->signature, "t") == 0)
                return v->u64 > 0;
        switch ((LaunchOption) i) {
        case LAUNCH_OPTION_STOP_SIGNAL: {
                int64_t sig = (int64_t) v->u64;
                return sig >= 1 && sig <= SIGRTMAX && sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU;
        }
        case LAUNCH_OPTION_STDIN:
                return strcmp(v->str, "null") == 0 || strcmp(v->str, "pipe") == 0;
        case LAUNCH_OPTION_TTY_ROWS:
        case LAUNCH_OPTION_TTY_COLUMNS:
                return v->u64 >= 1 && v->u64 <= LAUNCH_TTY_SIZE_MAX;
        case LAUNCH_OPTION_MAX_PARALLEL:
                return v->u64 >= 1;
        case LAUNCH_OPTION_ENVIRONMENT:
                return model_environment_ok(v->strv);
        case LAUNCH_OPTION_USER:
                return v->str[0] && strlen(v->str) <= LAUNCH_USER_NAME_MAX;
        case LAUNCH_OPTION_REQUEST_ID:
                return v->str[0] && strlen(v->str) <= 128 &&
                       strspn(v->str, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:@-") == strlen(v->str);
        case LAUNCH_OPTION_READ_WRITE_PATHS:
        case LAUNCH_OPTION_READ_ONLY_PATHS:
        case LAUNCH_OPTION_INACCESSIBLE_PATHS:
                return model_paths_ok(v->strv);
        case LAUNCH_OPTION_PROTECT_SYSTEM:
                return model_word_ok(v->str, (const char *const[]) { "no", "yes", "full", "strict", NULL });
        case LAUNCH_OPTION_PROTECT_HOME:
                return model_word_ok(v->str, (const char *const[]) { "no", "yes", "read-only", "tmpfs", NULL });
        case LAUNCH_OPTION_ARGV: {
                size_t n = 0, bytes = 0;
                for (; v->strv[n]; n++)
                        bytes += strlen(v->strv[n]) + 1;
                return n >= 1 && v->strv[0][0] && n <= LAUNCH_ARGV_MAX_WORDS && bytes <= LAUNCH_ARRAY_MAX_BYTES;
        }
        case LAUNCH_OPTION_ALLOWED_DOMAINS: {
                size_t n = 0;
                for (; v->strv[n]; n++)
                        if (!model_domain_ok(v->strv[n]))
                                return false;
                return n >= 1 && n <= 64;
        }
        case LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES: {
                /* AF_ words only, a '~' before the first alone, 1 to 16 of them. */
                static const char *const families[] = { "AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", NULL };
                size_t n = 0;
                for (; v->strv[n]; n++) {
                        const char *w = v->strv[n] + (n == 0 && v->strv[n][0] == '~');
                        bool known = false;
                        for (size_t k = 0; families[k]; k++)
                                known = known || strcmp(w, families[k]) == 0;
                        if (!known)
                                return false;
                }
                return n >= 1 && n <= 16;
        }
        default:
                return true;
        }
}

static void check_set(const LaunchOptions *o, int i, const LaunchValue *v) {
        FUZZ_CHECK(o->seen & LAUNCH_OPTION_BIT(i), "%s accepted but not seen", launch_options[i].name);
        switch ((LaunchOption) i) {
        case LAUNCH_OPTION_MAX_RUNTIME_USEC:
                FUZZ_CHECK(o->spec.max_runtime_usec == v->u64, "MaxRuntimeUSec");
                break;
        case LAUNCH_OPTION_MEMORY_MAX:
                FUZZ_CHECK(o->spec.memory_max == v->u64, "MemoryMax");
                break;
        case LAUNCH_OPTION_TASKS_MAX:
                FUZZ_CHECK(o->spec.tasks_max == v->u64, "TasksMax");
                break;
        case LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC:
                FUZZ_CHECK(o->spec.cpu_quota_per_sec_usec == v->u64, "CPUQuotaPerSecUSec");
                break;
        case LAUNCH_OPTION_ENVIRONMENT: {
                FUZZ_CHECK(o->spec.environment && o->spec.environment != v->strv, "Environment not copied");
                size_t k = 0;
                for (; v->strv[k]; k++)
                        FUZZ_CHECK(o->spec.environment[k] && strcmp(o->spec.environment[k], v->strv[k]) == 0 &&
                                           o->spec.environment[k] != v->strv[k],
                                   "Environment entry %zu", k);
                FUZZ_CHECK(!o->spec.environment[k], "Environment longer than given");
                break;
        }
        case LAUNCH_OPTION_USER:
                FUZZ_CHECK(o->spec.user && o->spec.user != v->str && strcmp(o->spec.user, v->str) == 0, "User");
                break;
        case LAUNCH_OPTION_STOP_SIGNAL:
                FUZZ_CHECK(o->spec.stop_signal == (int) (int64_t) v->u64, "StopSignal");
                break;
        case LAUNCH_OPTION_STOP_GRACE_USEC:
                FUZZ_CHECK(o->spec.stop_grace_usec == v->u64, "StopGraceUSec");
                break;
        case LAUNCH_OPTION_STDIN:
                FUZZ_CHECK(o->spec.stdin_mode == (strcmp(v->str, "pipe") == 0 ? JOB_STDIN_PIPE : JOB_STDIN_NULL), "Stdin");
                break;
        case LAUNCH_OPTION_TTY:
                /* Tty=false leaves what Stdin= chose. */
                FUZZ_CHECK(!v->u64 || o->spec.stdin_mode == JOB_STDIN_TTY, "Tty");
                break;
        case LAUNCH_OPTION_BIND_TO_CALLER:
                FUZZ_CHECK(o->spec.bind_to_caller == (v->u64 != 0), "BindToCaller");
                break;
        case LAUNCH_OPTION_ENFORCE_LIMITS:
                FUZZ_CHECK(o->spec.enforce_limits == (v->u64 != 0), "EnforceLimits");
                break;
        case LAUNCH_OPTION_PRIVATE_NETWORK:
                FUZZ_CHECK(o->spec.private_network == (v->u64 != 0), "PrivateNetwork");
                break;
        case LAUNCH_OPTION_PRIVATE_TMP:
                FUZZ_CHECK(o->spec.private_tmp == (v->u64 != 0), "PrivateTmp");
                break;
        case LAUNCH_OPTION_TTY_ROWS:
                FUZZ_CHECK(o->spec.tty_rows == v->u64, "TtyRows");
                break;
        case LAUNCH_OPTION_TTY_COLUMNS:
                FUZZ_CHECK(o->spec.tty_columns == v->u64, "TtyColumns");
                break;
        case LAUNCH_OPTION_LAUNCH_DEADLINE_USEC:
                FUZZ_CHECK(o->spec.launch_deadline_usec == v->u64, "LaunchDeadlineUSec");
                break;
        case LAUNCH_OPTION_QUEUE:
                FUZZ_CHECK(o->spec.queue == (v->u64 != 0), "Queue");
                break;
        case LAUNCH_OPTION_MAX_PARALLEL:
                FUZZ_CHECK(o->spec.max_parallel == v->u64, "MaxParallel");
                break;
        case LAUNCH_OPTION_REQUEST_ID:
                FUZZ_CHECK(o->spec.request_id && o->spec.request_id != v->str && strcmp(o->spec.request_id, v->str) == 0,
                           "RequestId");
                break;
        case LAUNCH_OPTION_ARGV: {
                FUZZ_CHECK(o->spec.argv && o->spec.argv != v->strv, "Argv not copied");
                size_t k = 0;
                for (; v->strv[k]; k++)
                        FUZZ_CHECK(o->spec.argv[k] && strcmp(o->spec.argv[k], v->strv[k]) == 0 && o->spec.argv[k] != v->strv[k],
                                   "Argv word %zu", k);
                FUZZ_CHECK(!o->spec.argv[k], "Argv longer than given");
                break;
        }
        case LAUNCH_OPTION_PROTECT_SYSTEM:
        case LAUNCH_OPTION_PROTECT_HOME: {
                unsigned v_set = i == LAUNCH_OPTION_PROTECT_SYSTEM ? o->spec.protect_system : o->spec.protect_home;
                const char *w = launch_option_word((LaunchOption) i, v_set);
                /* The word itself, or one of systemd's booleans for no or yes. */
                FUZZ_CHECK(w && (strcmp(w, v->str) == 0 || v_set <= 1), "%s", launch_options[i].name);
                break;
        }
        case LAUNCH_OPTION_READ_WRITE_PATHS:
        case LAUNCH_OPTION_READ_ONLY_PATHS:
        case LAUNCH_OPTION_INACCESSIBLE_PATHS:
        case LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES:
        case LAUNCH_OPTION_ALLOWED_DOMAINS: {
                bool paths = i != LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES && i != LAUNCH_OPTION_ALLOWED_DOMAINS;
                char *const *l = launch_option_get((LaunchOption) i, &o->spec).strv;
                FUZZ_CHECK(l && l != v->strv, "%s not copied", launch_options[i].name);
                size_t k = 0;
                for (; v->strv[k]; k++)
                        FUZZ_CHECK(l[k] && strcmp(l[k], v->strv[k]) == 0 && (!paths || launch_path_valid(l[k])),
                                   "%s entry %zu", launch_options[i].name, k);
                FUZZ_CHECK(!l[k], "%s longer than given", launch_options[i].name);
                break;
        }
        case LAUNCH_OPTION_PROTECT_GIT:
                FUZZ_CHECK(o->spec.protect_git == (v->u64 != 0), "ProtectGit");
                break;
        case _LAUNCH_OPTION_MAX:
                break;
        }
}

/* Field by field (a copy's padding may differ); the pointers themselves, so
 * nothing was replaced or freed. */
static bool same(const LaunchOptions *a, const LaunchOptions *b) {
        const JobSpec *x = &a->spec, *y = &b->spec;
        return a->seen == b->seen && x->max_runtime_usec == y->max_runtime_usec &&
               x->environment == y->environment && x->memory_max == y->memory_max && x->tasks_max == y->tasks_max &&
               x->cpu_quota_per_sec_usec == y->cpu_quota_per_sec_usec && x->user == y->user &&
               x->stop_signal == y->stop_signal && x->stop_grace_usec == y->stop_grace_usec &&
               x->stdin_mode == y->stdin_mode && x->tty_rows == y->tty_rows && x->tty_columns == y->tty_columns &&
               x->bind_to_caller == y->bind_to_caller && x->enforce_limits == y->enforce_limits &&
               x->launch_deadline_usec == y->launch_deadline_usec && x->request_id == y->request_id &&
               x->argv == y->argv && x->private_network == y->private_network &&
               x->private_tmp == y->private_tmp && x->protect_system == y->protect_system &&
               x->protect_home == y->protect_home && x->read_write_paths == y->read_write_paths &&
               x->read_only_paths == y->read_only_paths && x->inaccessible_paths == y->inaccessible_paths &&
               x->protect_git == y->protect_git && x->restrict_address_families == y->restrict_address_families;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Reader in = { data, size };
        LaunchOptions o;
        launch_options_init(&o);

        for (unsigned entry = 0; in.left > 0 && entry < ENTRIES_MAX; entry++) {
                char *key_buf = NULL, *sig_buf = NULL, *str = NULL, **strv = NULL;
                size_t n_strv = 0;

                unsigned k = read_byte(&in);
                const char *key = k < 0x80 ? launch_options[k % _LAUNCH_OPTION_MAX].name
                                           : (key_buf = read_string(&in));
                static const char *const sigs[] = { "t", "s", "as", "u", "i", "q", "b", NULL };
                unsigned s = read_byte(&in) % ELEMENTSOF(sigs);
                LaunchValue v = { .signature = sigs[s] ?: (sig_buf = read_string(&in)) };
                /* A value of a signature the bus reader knows always comes
                 * with it, however the signature was spelt here. */
                for (unsigned j = 0; !sigs[s] && j < ELEMENTSOF(sigs); j++)
                        if (sigs[j] && strcmp(v.signature, sigs[j]) == 0)
                                s = j;
                if (s == 0) {
                        for (unsigned b = 0; b < 8; b++)
                                v.u64 |= (uint64_t) read_byte(&in) << (8 * b);
                } else if (s == 3 || s == 4) {
                        uint32_t u = 0;
                        for (unsigned b = 0; b < 4; b++)
                                u |= (uint32_t) read_byte(&in) << (8 * b);
                        v.u64 = s == 3 ? u : (uint64_t) (int64_t) (int32_t) u;
                } else if (s == 5) {
                        v.u64 = read_u16(&in);
                } else if (s == 6) {
                        v.u64 = read_byte(&in) != 0;
                } else if (s == 1) {
                        v.str = str = read_string(&in);
                } else if (s == 2) {
                        n_strv = read_u16(&in) % ARRAY_MAX;
                        strv = calloc(n_strv + 1, sizeof(char *));
                        FUZZ_CHECK(strv, "calloc");
                        for (size_t j = 0; j < n_strv; j++)
                                strv[j] = in.left > 0 || j == 0 ? read_string(&in) : strdup(strv[j - 1]);
                        v.strv = strv;
                }

                int i = -1;
                for (int j = 0; j < _LAUNCH_OPTION_MAX; j++)
                        if (strcmp(key, launch_options[j].name) == 0)
                                i = j;
                bool expected = model_accepts(&o, i, &v);

                LaunchOptions before = o;
                char *error = NULL;
                int r = launch_options_set(&o, key, &v, &error);
                if (r == 0) {
                        FUZZ_CHECK(expected, "entry %u: '%s' of '%s' accepted against the rules", entry, key,
                                   v.signature);
                        FUZZ_CHECK(!error, "a message on success: %s", error);
                        FUZZ_CHECK((o.seen & ~before.seen) == LAUNCH_OPTION_BIT(i), "seen 0x%" PRIx64 " -> 0x%" PRIx64, before.seen, o.seen);
                        check_set(&o, i, &v);
                } else {
                        FUZZ_CHECK(r == -EINVAL, "launch_options_set: %d", r);
                        FUZZ_CHECK(!expected, "entry %u: '%s' of '%s' refused: %s", entry, key, v.signature,
                                   error ?: "");
                        FUZZ_CHECK(error && error[0], "refused without a message");
                        /* The message goes back to the caller: it must not
                         * echo what the caller sent at any length. */
                        FUZZ_CHECK(strlen(error) < 256, "a message of %zu bytes: %.300s", strlen(error), error);
                        FUZZ_CHECK(same(&before, &o), "a refused entry changed the options");
                        free(error);
                }

                free(key_buf);
                free(sig_buf);
                free(str);
                for (size_t j = 0; j < n_strv; j++)
                        free(strv[j]);
                free(strv);
        }

        launch_options_done(&o);
        FUZZ_CHECK(!o.spec.environment && !o.spec.user && !o.seen, "launch_options_done left something");
        return 0;
}
