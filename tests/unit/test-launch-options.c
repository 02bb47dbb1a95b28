/* SPDX-License-Identifier: MIT */
/* launch_options_set(): the rules for Launch's a{sv}, without a bus. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "launch-options.h"
#include "macro.h"
#include "strv.h"

static LaunchOptions o;

static void init(void) {
        launch_options_init(&o);
}

static void done(void) {
        launch_options_done(&o);
}

TestSuite(launch_options, .init = init, .fini = done);

static LaunchValue u64(uint64_t v) {
        return (LaunchValue) { .signature = "t", .u64 = v };
}

static LaunchValue str(const char *s) {
        return (LaunchValue) { .signature = "s", .str = s };
}

static LaunchValue strv(char *const *l) {
        return (LaunchValue) { .signature = "as", .strv = l };
}

static const char *name(LaunchOption i) {
        return launch_options[i].name;
}

/* Sets key = v and expects success. */
static void set_ok(const char *key, LaunchValue v) {
        _cleanup_free_ char *error = NULL;
        int r = launch_options_set(&o, key, &v, &error);

        cr_assert_eq(r, 0, "%s: %d (%s)", key, r, error ?: "");
        cr_assert_null(error);
}

/* Sets key = v, expects -EINVAL with a message containing want, and o as it
 * was before. */
static void set_fails(const char *key, LaunchValue v, const char *want) {
        _cleanup_free_ char *error = NULL;
        LaunchOptions before = o;
        int r = launch_options_set(&o, key, &v, &error);

        cr_assert_eq(r, -EINVAL, "%s: %d", key, r);
        cr_assert_not_null(error, "%s: no message", key);
        cr_assert(strstr(error, want), "%s: message '%s' does not say '%s'", key, error, want);
        cr_assert_eq(memcmp(&before, &o, sizeof o), 0, "%s: a rejected call changed the options", key);
}

Test(launch_options, success_leaves_every_value) {
        char *env[] = { "A=1", "_B=two words", NULL };

        set_ok(name(LAUNCH_OPTION_MAX_RUNTIME_USEC), u64(5 * USEC_PER_SEC));
        set_ok(name(LAUNCH_OPTION_ENVIRONMENT), strv(env));
        set_ok(name(LAUNCH_OPTION_MEMORY_MAX), u64(1 << 30));
        set_ok(name(LAUNCH_OPTION_TASKS_MAX), u64(64));
        set_ok(name(LAUNCH_OPTION_CPU_QUOTA_PER_SEC_USEC), u64(500000));
        set_ok(name(LAUNCH_OPTION_USER), str("nobody"));
        set_ok(name(LAUNCH_OPTION_STOP_SIGNAL), (LaunchValue) { .signature = "i", .u64 = 2 });
        set_ok(name(LAUNCH_OPTION_STOP_GRACE_USEC), u64(0));
        set_ok(name(LAUNCH_OPTION_STDIN), str("pipe"));
        set_ok(name(LAUNCH_OPTION_TTY), (LaunchValue) { .signature = "b", .u64 = 1 });
        set_ok(name(LAUNCH_OPTION_TTY_ROWS), (LaunchValue) { .signature = "q", .u64 = 50 });
        set_ok(name(LAUNCH_OPTION_TTY_COLUMNS), (LaunchValue) { .signature = "q", .u64 = 10000 });
        set_ok(name(LAUNCH_OPTION_BIND_TO_CALLER), (LaunchValue) { .signature = "b", .u64 = 1 });
        set_ok(name(LAUNCH_OPTION_ENFORCE_LIMITS), (LaunchValue) { .signature = "b", .u64 = 1 });
        set_ok(name(LAUNCH_OPTION_LAUNCH_DEADLINE_USEC), u64(1700000000000000));
        set_ok(name(LAUNCH_OPTION_REQUEST_ID), str("deploy-42"));
        char *words[] = { "git", "push", NULL };
        set_ok(name(LAUNCH_OPTION_ARGV), (LaunchValue) { .signature = "as", .strv = words });
        set_ok(name(LAUNCH_OPTION_PRIVATE_NETWORK), (LaunchValue) { .signature = "b", .u64 = 1 });
        set_ok(name(LAUNCH_OPTION_PRIVATE_TMP), (LaunchValue) { .signature = "b", .u64 = 1 });
        set_ok(name(LAUNCH_OPTION_PROTECT_SYSTEM), str("strict"));
        set_ok(name(LAUNCH_OPTION_PROTECT_HOME), str("read-only"));
        char *rw[] = { "/src", "-/var/cache//x/", NULL }, *ro[] = { "/src/.git", NULL }, *hidden[] = { "/etc/shadow", NULL };
        set_ok(name(LAUNCH_OPTION_READ_WRITE_PATHS), (LaunchValue) { .signature = "as", .strv = rw });
        set_ok(name(LAUNCH_OPTION_READ_ONLY_PATHS), (LaunchValue) { .signature = "as", .strv = ro });
        set_ok(name(LAUNCH_OPTION_INACCESSIBLE_PATHS), (LaunchValue) { .signature = "as", .strv = hidden });
        set_ok(name(LAUNCH_OPTION_PROTECT_GIT), (LaunchValue) { .signature = "b", .u64 = 0 });
        char *families[] = { "~AF_PACKET", "AF_NETLINK", NULL };
        set_ok(name(LAUNCH_OPTION_RESTRICT_ADDRESS_FAMILIES), (LaunchValue) { .signature = "as", .strv = families });
        char *domains[] = { "pypi.org", "*.npmjs.org", "registry.example.com:8443", NULL };
        set_ok(name(LAUNCH_OPTION_ALLOWED_DOMAINS), (LaunchValue) { .signature = "as", .strv = domains });
        set_ok(name(LAUNCH_OPTION_QUEUE), (LaunchValue) { .signature = "b", .u64 = 1 });
        set_ok(name(LAUNCH_OPTION_MAX_PARALLEL), (LaunchValue) { .signature = "u", .u64 = 4000000000 });
        cr_assert_str_eq(o.spec.allowed_domains[1], "*.npmjs.org");
        cr_assert_neq(o.spec.allowed_domains[0], domains[0]);
        cr_assert(o.spec.queue);
        cr_assert_eq(o.spec.max_parallel, 4000000000U, "a u's whole range");
        cr_assert(o.spec.private_network && o.spec.private_tmp);
        cr_assert_eq(o.spec.protect_system, PROTECT_SYSTEM_STRICT);
        cr_assert_eq(o.spec.protect_home, PROTECT_HOME_READ_ONLY);
        cr_assert_str_eq(o.spec.read_write_paths[1], "-/var/cache//x/", "kept as given");
        cr_assert_str_eq(o.spec.read_only_paths[0], "/src/.git");
        cr_assert_str_eq(o.spec.inaccessible_paths[0], "/etc/shadow");
        cr_assert(!o.spec.protect_git);
        cr_assert_str_eq(o.spec.restrict_address_families[0], "~AF_PACKET");
        cr_assert_neq(o.spec.restrict_address_families[0], families[0]);
        cr_assert_str_eq(o.spec.request_id, "deploy-42");
        cr_assert_str_eq(o.spec.argv[1], "push");
        cr_assert_neq(o.spec.argv[0], words[0]);
        cr_assert_eq(o.spec.stdin_mode, JOB_STDIN_TTY, "Tty=true after Stdin=pipe (launch_options_check() refuses both)");
        cr_assert(o.spec.bind_to_caller && o.spec.enforce_limits);
        cr_assert_eq(o.spec.tty_rows, 50);
        cr_assert_eq(o.spec.tty_columns, 10000);
        cr_assert_eq(o.spec.launch_deadline_usec, 1700000000000000);

        cr_assert_eq(o.spec.max_runtime_usec, 5 * USEC_PER_SEC);
        cr_assert_eq(o.spec.stop_signal, 2);
        cr_assert(launch_options_given(&o, LAUNCH_OPTION_STOP_GRACE_USEC));
        cr_assert_eq(o.spec.stop_grace_usec, 0, "a grace of 0 kills at once");
        cr_assert_eq(o.spec.memory_max, 1 << 30);
        cr_assert_eq(o.spec.tasks_max, 64);
        cr_assert_eq(o.spec.cpu_quota_per_sec_usec, 500000);
        cr_assert_str_eq(o.spec.user, "nobody");
        cr_assert_not_null(o.spec.environment);
        cr_assert_str_eq(o.spec.environment[0], "A=1");
        cr_assert_str_eq(o.spec.environment[1], "_B=two words");
        cr_assert_null(o.spec.environment[2]);
        /* Copies, not the caller's strings. */
        cr_assert_neq(o.spec.environment[0], env[0]);
        cr_assert_eq(o.seen, LAUNCH_OPTION_BIT(_LAUNCH_OPTION_MAX) - 1);
}

Test(launch_options, unknown_key) {
        set_fails("MemoryLimit", u64(1), "Unknown option 'MemoryLimit'");
}

Test(launch_options, a_long_unknown_key_is_not_echoed) {
        char key[101];
        _cleanup_free_ char *error = NULL;
        LaunchValue v = u64(1);

        memset(key, 'K', 100);
        key[100] = '\0';
        set_fails(key, v, "Unknown option (a 100-byte key)");

        cr_assert_eq(launch_options_set(&o, key, &v, &error), -EINVAL);
        cr_assert_null(strstr(error, "KKKKKKKKKK"), "the key was echoed: %s", error);
}

Test(launch_options, a_key_given_twice) {
        set_ok(name(LAUNCH_OPTION_MEMORY_MAX), u64(4096));
        set_fails(name(LAUNCH_OPTION_MEMORY_MAX), u64(8192), "Option MemoryMax given more than once");
        cr_assert_eq(o.spec.memory_max, 4096);

        set_ok(name(LAUNCH_OPTION_USER), str("a"));
        set_fails(name(LAUNCH_OPTION_USER), str("b"), "given more than once");
        cr_assert_str_eq(o.spec.user, "a");
}

Test(launch_options, wrong_type) {
        char *env[] = { "A=1", NULL };

        set_fails(name(LAUNCH_OPTION_MEMORY_MAX), str("1G"), "Option MemoryMax must be of type 't', not 's'");
        set_fails(name(LAUNCH_OPTION_USER), u64(0), "Option User must be of type 's', not 't'");
        set_fails(name(LAUNCH_OPTION_ENVIRONMENT), str("A=1"), "must be of type 'as', not 's'");
        set_fails(name(LAUNCH_OPTION_TASKS_MAX), strv(env), "not 'as'");
        /* A caller's signature is cut, not echoed at any length. */
        set_fails(name(LAUNCH_OPTION_TASKS_MAX),
                  (LaunchValue) { .signature = "a{sv}a{sv}a{sv}a{sv}a{sv}" },
                  "not 'a{sv}a{sv}a{sv}a'");
}

Test(launch_options, zero_is_refused_for_numbers) {
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                char want[128];

                /* A grace of 0 is a stop that kills at once. */
                if (!streq(launch_options[i].signature, "t") || i == LAUNCH_OPTION_STOP_GRACE_USEC)
                        continue;
                snprintf(want, sizeof want, "Option %s must be greater than 0", name(i));
                set_fails(name(i), u64(0), want);
        }
}

Test(launch_options, stop_signal_and_grace_are_bounded) {
        set_fails(name(LAUNCH_OPTION_STOP_SIGNAL), ((LaunchValue) { .signature = "i", .u64 = 0 }),
                  "Option StopSignal must be a signal number from 1 to 64 that ends a process");
        set_fails(name(LAUNCH_OPTION_STOP_SIGNAL), ((LaunchValue) { .signature = "i", .u64 = (uint64_t) -9 }),
                  "Option StopSignal must be a signal number from 1 to 64 that ends a process");
        set_fails(name(LAUNCH_OPTION_STOP_SIGNAL), ((LaunchValue) { .signature = "i", .u64 = 19 /* SIGSTOP */ }),
                  "Option StopSignal must be a signal number from 1 to 64 that ends a process");
        set_fails(name(LAUNCH_OPTION_STOP_GRACE_USEC), u64(600 * USEC_PER_SEC + 1),
                  "Option StopGraceUSec must be at most 600000000 µs (10min)");
        set_ok(name(LAUNCH_OPTION_STOP_GRACE_USEC), u64(600 * USEC_PER_SEC));
}

/* Infinity is kept as asked, apart from "not asked" (0): the policy refuses
 * it under MaxRuntimeSec= as any value above it (test-launch-request). */
Test(launch_options, infinity_max_runtime_is_kept_as_asked) {
        set_ok(name(LAUNCH_OPTION_MAX_RUNTIME_USEC), u64(UINT64_MAX));
        cr_assert_eq(o.spec.max_runtime_usec, UINT64_MAX);
        cr_assert(o.seen & (LAUNCH_OPTION_BIT(LAUNCH_OPTION_MAX_RUNTIME_USEC)));

        /* For the limits infinity is a value like any other. */
        set_ok(name(LAUNCH_OPTION_MEMORY_MAX), u64(UINT64_MAX));
        cr_assert_eq(o.spec.memory_max, UINT64_MAX);
}

Test(launch_options, environment_entries) {
        const char *bad[] = { "NOEQUALS", "=value", "1A=x", "A-B=x", "A B=x", "Ä=x" };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *env[] = { "GOOD=1", (char *) bad[i], NULL };

                set_fails(name(LAUNCH_OPTION_ENVIRONMENT), strv(env),
                          "Environment entry 2 is not of the form NAME=VALUE");
        }

        /* An empty value, and '=' in the value, are fine. */
        char *good[] = { "EMPTY=", "EQ=a=b", NULL };
        set_ok(name(LAUNCH_OPTION_ENVIRONMENT), strv(good));
        cr_assert_str_eq(o.spec.environment[1], "EQ=a=b");
}

Test(launch_options, environment_limits) {
        _cleanup_free_ char **env = calloc(LAUNCH_ENVIRONMENT_MAX_ENTRIES + 2, sizeof(char *));
        _cleanup_free_ char *big = malloc(LAUNCH_ARRAY_MAX_BYTES + 1);

        cr_assert_not_null(env);
        cr_assert_not_null(big);

        for (size_t i = 0; i <= LAUNCH_ENVIRONMENT_MAX_ENTRIES; i++)
                env[i] = "A=1";
        set_fails(name(LAUNCH_OPTION_ENVIRONMENT), strv(env), "Environment is too large (1025 entries");

        /* Exactly the maximum is fine. */
        env[LAUNCH_ENVIRONMENT_MAX_ENTRIES] = NULL;
        set_ok(name(LAUNCH_OPTION_ENVIRONMENT), strv(env));
        launch_options_done(&o);

        /* One entry of MAX_BYTES bytes with its NUL is one too many. */
        memset(big, 'x', LAUNCH_ARRAY_MAX_BYTES);
        memcpy(big, "BIG=", 4);
        big[LAUNCH_ARRAY_MAX_BYTES] = '\0';
        char *one[] = { big, NULL };
        set_fails(name(LAUNCH_OPTION_ENVIRONMENT), strv(one), "Environment is too large (1 entries, 131073 bytes");

        big[LAUNCH_ARRAY_MAX_BYTES - 1] = '\0';
        set_ok(name(LAUNCH_OPTION_ENVIRONMENT), strv(one));
}

Test(launch_options, user_names) {
        char name_max[256 + 2];
        cr_assert_eq(LAUNCH_USER_NAME_MAX, 256);

        set_fails(name(LAUNCH_OPTION_USER), str(""), "Option User must be a user name");

        memset(name_max, 'u', LAUNCH_USER_NAME_MAX + 1);
        name_max[LAUNCH_USER_NAME_MAX + 1] = '\0';
        set_fails(name(LAUNCH_OPTION_USER), str(name_max), "Option User must be a user name");

        name_max[LAUNCH_USER_NAME_MAX] = '\0';
        set_ok(name(LAUNCH_OPTION_USER), str(name_max));
        cr_assert_eq(strlen(o.spec.user), LAUNCH_USER_NAME_MAX);
}

Test(launch_options, a_rejected_call_keeps_what_was_set) {
        char *env[] = { "A=1", NULL };
        char *bad_env[] = { "-=1", NULL };

        set_ok(name(LAUNCH_OPTION_ENVIRONMENT), strv(env));
        set_ok(name(LAUNCH_OPTION_TASKS_MAX), u64(10));

        /* set_fails() compares the whole struct, pointers included. */
        set_fails("Nope", u64(1), "Unknown option");
        set_fails(name(LAUNCH_OPTION_ENVIRONMENT), strv(bad_env), "given more than once");
        set_fails(name(LAUNCH_OPTION_MEMORY_MAX), u64(0), "greater than 0");
        set_fails(name(LAUNCH_OPTION_USER), str(""), "user name");

        cr_assert_str_eq(o.spec.environment[0], "A=1");
        cr_assert_eq(o.spec.tasks_max, 10);
        cr_assert_eq(o.spec.memory_max, 0);
        cr_assert_null(o.spec.user);
        cr_assert_eq(o.seen, (LAUNCH_OPTION_BIT(LAUNCH_OPTION_ENVIRONMENT)) | (LAUNCH_OPTION_BIT(LAUNCH_OPTION_TASKS_MAX)));
}

Test(launch_options, input_and_terminal_rules) {
        set_fails(name(LAUNCH_OPTION_STDIN), str("tty"), "Option Stdin must be 'null' or 'pipe', not 'tty'");
        set_fails(name(LAUNCH_OPTION_TTY_ROWS), ((LaunchValue) { .signature = "q", .u64 = 0 }),
                  "Option TtyRows must be from 1 to 10000");
        set_fails(name(LAUNCH_OPTION_TTY_COLUMNS), ((LaunchValue) { .signature = "q", .u64 = 10001 }),
                  "Option TtyColumns must be from 1 to 10000");

        char *message = NULL;
        LaunchOptions a = { .spec.stdin_mode = JOB_STDIN_TTY, .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_STDIN) | LAUNCH_OPTION_BIT(LAUNCH_OPTION_TTY) };
        cr_assert_eq(launch_options_check(&a, &message), -EINVAL, "Stdin with Tty=true");
        cr_assert_not_null(strstr(message, "Stdin cannot be given with Tty=true"));
        free(message);
        LaunchOptions b = { .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_TTY_ROWS) };
        cr_assert_eq(launch_options_check(&b, &message), -EINVAL, "TtyRows without Tty");
        free(message);
        LaunchOptions c = { .spec.stdin_mode = JOB_STDIN_TTY, .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_TTY) | LAUNCH_OPTION_BIT(LAUNCH_OPTION_TTY_ROWS) };
        cr_assert_eq(launch_options_check(&c, &message), 0);
}

/* AllowedDomains: names as the contract words them, needing PrivateNetwork. */
Test(launch_options, allowed_domains) {
        static const char *const bad[] = { "127.0.0.1", "*", "*.com", "example.com:0", "Example.com", "exämple.com",
                                           "::1", "[::1]:443", "example..com", "-a.example.com", "a_b.example.com",
                                           "example.com:65536", "example.com:080", "example.com.", "" };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                char *one[] = { (char *) bad[i], NULL };
                set_fails(name(LAUNCH_OPTION_ALLOWED_DOMAINS), ((LaunchValue) { .signature = "as", .strv = one }),
                          "AllowedDomains entry 1");
        }
        char *many[DOMAIN_LIST_MAX + 2];
        char names[DOMAIN_LIST_MAX + 1][16];
        for (int i = 0; i <= DOMAIN_LIST_MAX; i++) {
                snprintf(names[i], sizeof names[i], "h%d.example", i);
                many[i] = names[i];
        }
        many[DOMAIN_LIST_MAX + 1] = NULL;
        set_fails(name(LAUNCH_OPTION_ALLOWED_DOMAINS), ((LaunchValue) { .signature = "as", .strv = many }),
                  "AllowedDomains takes 1 to 64 names");
        char *message = NULL;
        LaunchOptions a = { .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_ALLOWED_DOMAINS) };
        cr_assert_eq(launch_options_check(&a, &message), -EINVAL, "AllowedDomains without PrivateNetwork");
        cr_assert_not_null(strstr(message, "AllowedDomains needs PrivateNetwork=yes"));
        free(message);
        LaunchOptions b = { .spec.private_network = true, .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_ALLOWED_DOMAINS) };
        cr_assert_eq(launch_options_check(&b, &message), 0);
}

/* The queue's options: MaxParallel at least 1, and no terminal job waits. */
Test(launch_options, queue_options) {
        set_fails(name(LAUNCH_OPTION_MAX_PARALLEL), ((LaunchValue) { .signature = "u", .u64 = 0 }),
                  "Option MaxParallel must be from 1 to 4294967295");
        set_fails(name(LAUNCH_OPTION_MAX_PARALLEL), u64(4), "Option MaxParallel must be of type 'u', not 't'");
        char *message = NULL;
        LaunchOptions a = { .spec.stdin_mode = JOB_STDIN_TTY, .spec.queue = true,
                            .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_QUEUE) | LAUNCH_OPTION_BIT(LAUNCH_OPTION_TTY) };
        cr_assert_eq(launch_options_check(&a, &message), -EINVAL, "Queue with Tty=true");
        cr_assert_not_null(strstr(message, "Queue cannot be given with Tty=true"));
        free(message);
        LaunchOptions b = { .spec.queue = true, .seen = LAUNCH_OPTION_BIT(LAUNCH_OPTION_QUEUE) };
        cr_assert_eq(launch_options_check(&b, &message), 0);
}

/* The table itself: each row's type goes with its signature, its default
 * is a value a spec may hold, and its keys are its own. */
Test(launch_options, every_row_is_consistent) {
        static const char *const signature_of[] = {
                [LAUNCH_VALUE_U64] = "t", [LAUNCH_VALUE_SIGNAL] = "i", [LAUNCH_VALUE_U16] = "q", [LAUNCH_VALUE_U32] = "u",
                [LAUNCH_VALUE_BOOL] = "b", [LAUNCH_VALUE_STRING] = "s", [LAUNCH_VALUE_ENV] = "as",
                [LAUNCH_VALUE_STDIN] = "s", [LAUNCH_VALUE_TTY] = "b", [LAUNCH_VALUE_TOKEN] = "s",
                [LAUNCH_VALUE_ARGV] = "as", [LAUNCH_VALUE_CHOICE] = "s", [LAUNCH_VALUE_PATHS] = "as",
                [LAUNCH_VALUE_WORDS] = "as", [LAUNCH_VALUE_DOMAINS] = "as",
        };
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *r = &launch_options[i];
                cr_assert_str_eq(r->signature, signature_of[r->type], "%s", r->name);
                cr_assert_eq(launch_option_by_name(r->name), r, "%s", r->name);
                if (r->flags & LAUNCH_LIMIT)
                        cr_assert(r->type == LAUNCH_VALUE_U64 || r->type == LAUNCH_VALUE_SIGNAL, "%s", r->name);
                cr_assert_leq(r->min, r->max, "%s", r->name);
                /* A CHOICE's words are max + 1, its default the first; a
                 * WORDS row has words, of any number. */
                cr_assert_eq(r->words != NULL, r->type == LAUNCH_VALUE_CHOICE || r->type == LAUNCH_VALUE_WORDS, "%s", r->name);
                bool choice = r->type == LAUNCH_VALUE_CHOICE;
                for (uint64_t w = 0; choice && w <= r->max; w++)
                        cr_assert_not_null(r->words[w], "%s", r->name);
                cr_assert(!choice || (!r->words[r->max + 1] && r->default_value == 0), "%s", r->name);
                /* A modifier qualifies a sandbox: it is a sandbox row. */
                cr_assert(!(r->flags & LAUNCH_SANDBOX_MODIFIER) || (r->flags & LAUNCH_SANDBOX), "%s", r->name);
                for (LaunchOption j = 0; j < i; j++)
                        cr_assert(!r->json_key || !launch_options[j].json_key ||
                                          !streq(r->json_key, launch_options[j].json_key),
                                  "%s: spec.json key %s twice", r->name, r->json_key);
        }
        cr_assert_null(launch_option_by_name("NoSuchOption"));
}

/* Every option not at its default comes back from spec.json as it went;
 * one at its default is not written unless the row says it is required. */
Test(launch_options, spec_json_keeps_every_option) {
        char *env[] = { "A=1", NULL };
        JobSpec s = { .id = "abc0123456", .session_id = (char *) "s", .command = (char *) "true",
                      .cwd = (char *) "/", .home = (char *) "/", .shell = (char *) "/bin/sh",
                      .unit = (char *) "", .mechanism = MECHANISM_SYSTEMD };
        launch_options_defaults(&s);
        _cleanup_free_ char *plain = NULL;
        s.user = (char *) "root";
        s.environment = env;
        cr_assert_eq(job_spec_to_json(&s, &plain), 0);
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                const LaunchOptionInfo *r = &launch_options[i];
                if (!r->json_key)
                        continue;
                char key[64];
                snprintf(key, sizeof key, "\"%s\":", r->json_key);
                cr_assert_eq(strstr(plain, key) != NULL, (r->flags & LAUNCH_REQUIRED) != 0, "%s in %s", key, plain);
        }

        s.max_runtime_usec = 7;
        s.memory_max = UINT64_MAX;
        s.tasks_max = 3;
        s.cpu_quota_per_sec_usec = 250000;
        s.stop_signal = 2;
        s.stop_grace_usec = 0;
        s.stdin_mode = JOB_STDIN_TTY;
        s.tty_rows = 10000;
        s.tty_columns = 1;
        s.bind_to_caller = s.enforce_limits = true;
        char *words[] = { "printf", "%s|", "a b", NULL };
        s.request_id = (char *) "agent-7:call@3.x";
        s.private_network = s.private_tmp = true;
        s.protect_system = PROTECT_SYSTEM_FULL;
        s.protect_home = PROTECT_HOME_TMPFS;
        char *rw[] = { "/a", "-/b", NULL };
        s.read_write_paths = s.read_only_paths = s.inaccessible_paths = rw;
        s.argv = words;
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        _cleanup_(job_spec_done) JobSpec t = {};
        cr_assert_eq(job_spec_from_json(json, &t), 0, "%s", json);
        for (LaunchOption i = 0; i < _LAUNCH_OPTION_MAX; i++) {
                LaunchValue a = launch_option_get(i, &s), b = launch_option_get(i, &t);
                const char *n = launch_options[i].name;
                cr_assert_eq(a.u64, b.u64, "%s", n);
                cr_assert_str_eq(a.str ?: "", b.str ?: "", "%s", n);
                cr_assert_eq(strv_length(a.strv), strv_length(b.strv), "%s", n);
        }
        cr_assert_str_eq(t.environment[0], "A=1");
        cr_assert_str_eq(t.argv[2], "a b");
        cr_assert_str_eq(t.inaccessible_paths[1], "-/b");
        cr_assert_eq(t.protect_home, PROTECT_HOME_TMPFS);
}

/* ProtectSystem and ProtectHome take systemd's words (and its booleans for
 * no and yes); anything else is refused naming the words. The path options
 * take absolute paths, each optional with '-'. A refusal leaves the options
 * as they were. */
Test(launch_options, sandbox_words_and_paths_are_checked) {
        static const struct { const char *word; int value; } system_words[] = {
                { "no", PROTECT_SYSTEM_NO }, { "yes", PROTECT_SYSTEM_YES }, { "true", PROTECT_SYSTEM_YES },
                { "0", PROTECT_SYSTEM_NO }, { "full", PROTECT_SYSTEM_FULL }, { "strict", PROTECT_SYSTEM_STRICT },
                { "Strict", -1 }, { "", -1 }, { "read-only", -1 },
        };
        for (size_t k = 0; k < ELEMENTSOF(system_words); k++) {
                _cleanup_(launch_options_done) LaunchOptions opts;
                launch_options_init(&opts);
                _cleanup_free_ char *message = NULL;
                LaunchValue v = str(system_words[k].word);
                int r = launch_options_set(&opts, "ProtectSystem", &v, &message);
                if (system_words[k].value < 0) {
                        cr_assert_eq(r, -EINVAL, "%s", system_words[k].word);
                        cr_assert(strstr(message, "must be 'no', 'yes', 'full' or 'strict'"), "%s", message);
                        cr_assert_eq(opts.spec.protect_system, PROTECT_SYSTEM_NO);
                } else {
                        cr_assert_eq(r, 0, "%s: %s", system_words[k].word, message);
                        cr_assert_eq(opts.spec.protect_system, (unsigned) system_words[k].value);
                }
        }
        static const struct { const char *path; bool ok; } paths[] = {
                { "/", true }, { "-/x", true }, { "/a//b/", true }, { "/a/.b", true }, { "/a/..b", true },
                { "x", false }, { "-x", false }, { "", false }, { "-", false }, { "--/x", false },
                { "/a/./b", false }, { "/a/..", false }, { "/..", false }, { "/.", false },
        };
        for (size_t k = 0; k < ELEMENTSOF(paths); k++) {
                _cleanup_(launch_options_done) LaunchOptions opts;
                launch_options_init(&opts);
                _cleanup_free_ char *message = NULL;
                char *l[] = { (char *) "/ok", (char *) paths[k].path, NULL };
                int r = launch_options_set(&opts, "ReadOnlyPaths", &(LaunchValue) { .signature = "as", .strv = l },
                                           &message);
                cr_assert_eq(r, paths[k].ok ? 0 : -EINVAL, "'%s': %s", paths[k].path, message);
                if (!paths[k].ok) {
                        cr_assert(strstr(message, "ReadOnlyPaths entry 2"), "%s", message);
                        cr_assert_null(opts.spec.read_only_paths);
                }
        }
        _cleanup_(launch_options_done) LaunchOptions opts;
        launch_options_init(&opts);
        _cleanup_free_ char *message = NULL;
        char *none[] = { NULL };
        cr_assert_eq(launch_options_set(&opts, "InaccessiblePaths", &(LaunchValue) { .signature = "as", .strv = none },
                                        &message), -EINVAL);
        cr_assert_str_eq(message, "InaccessiblePaths needs at least one path");

        /* A refusal echoes a short path only, and says which rule a long one
         * broke: the answer stays under 256 bytes whatever was sent. */
        char relative[200], too_long[LAUNCH_PATH_MAX_BYTES + 3];
        memset(relative, 'a', sizeof relative - 1);
        relative[sizeof relative - 1] = '\0';
        too_long[0] = '-';
        memset(too_long + 1, '/', sizeof too_long - 2);
        too_long[sizeof too_long - 1] = '\0';
        const struct { const char *path; const char *message; } refused[] = {
                { "rel", "ReadWritePaths entry 1 ('rel') is not an absolute path without . or .. "
                         "(a leading '-' makes it optional)" },
                { relative, "ReadWritePaths entry 1 is not an absolute path without . or .. "
                            "(a leading '-' makes it optional)" },
                { too_long, "ReadWritePaths entry 1 is longer than 4095 bytes" },
        };
        for (size_t k = 0; k < ELEMENTSOF(refused); k++) {
                _cleanup_(launch_options_done) LaunchOptions refusing;
                launch_options_init(&refusing);
                _cleanup_free_ char *m = NULL;
                char *l[] = { (char *) refused[k].path, NULL };
                cr_assert_eq(launch_options_set(&refusing, "ReadWritePaths", &(LaunchValue) { .signature = "as", .strv = l }, &m),
                             -EINVAL);
                cr_assert_str_eq(m, refused[k].message);
        }
        /* 4095 bytes after the '-' is the most: taken. */
        too_long[sizeof too_long - 2] = '\0';
        _cleanup_(launch_options_done) LaunchOptions longest;
        launch_options_init(&longest);
        _cleanup_free_ char *m = NULL;
        char *l[] = { too_long, NULL };
        cr_assert_eq(launch_options_set(&longest, "ReadWritePaths", &(LaunchValue) { .signature = "as", .strv = l }, &m),
                     0, "%s", m);
}

/* RequestId is a token of bounded length; Argv names a program. A refused
 * value leaves the options as they were. */
Test(launch_options, request_id_and_argv_are_checked) {
        static const struct { const char *id; bool ok; } ids[] = {
                { "a", true }, { "run-1:2@host.x_y", true }, { "", false }, { "a b", false },
                { "a/b", false }, { "é", false },
        };
        for (size_t k = 0; k < ELEMENTSOF(ids); k++) {
                _cleanup_(launch_options_done) LaunchOptions opts;
                launch_options_init(&opts);
                _cleanup_free_ char *message = NULL;
                LaunchValue v = { .signature = "s", .str = ids[k].id };
                int r = launch_options_set(&opts, "RequestId", &v, &message);
                cr_assert_eq(r, ids[k].ok ? 0 : -EINVAL, "'%s'", ids[k].id);
                cr_assert_eq(opts.spec.request_id != NULL, ids[k].ok);
                if (!ids[k].ok)
                        cr_assert_not_null(strstr(message, "RequestId"));
        }
        char long_id[130];
        memset(long_id, 'x', 129);
        long_id[129] = 0;
        cr_assert(!launch_request_id_is_valid(long_id));
        long_id[128] = 0;
        cr_assert(launch_request_id_is_valid(long_id));

        char *none[] = { NULL }, *empty_program[] = { "", "x", NULL }, *ok[] = { "ls", "", NULL };
        char **cases[] = { none, empty_program };
        for (size_t k = 0; k < ELEMENTSOF(cases); k++) {
                _cleanup_(launch_options_done) LaunchOptions opts;
                launch_options_init(&opts);
                _cleanup_free_ char *message = NULL;
                LaunchValue v = { .signature = "as", .strv = cases[k] };
                cr_assert_eq(launch_options_set(&opts, "Argv", &v, &message), -EINVAL);
                cr_assert_null(opts.spec.argv);
                cr_assert_not_null(strstr(message, "program"));
        }
        _cleanup_(launch_options_done) LaunchOptions opts;
        launch_options_init(&opts);
        _cleanup_free_ char *message = NULL;
        cr_assert_eq(launch_options_set(&opts, "Argv", &(LaunchValue) { .signature = "as", .strv = ok }, &message), 0);
        cr_assert_str_eq(opts.spec.argv[0], "ls");
        cr_assert_str_eq(opts.spec.argv[1], "");
}

/* A value no Launch could have given is damage, and one that could not be
 * read back is never written. */
Test(launch_options, spec_json_values_are_bounded) {
        JobSpec s = { .id = "abc0123456", .session_id = (char *) "s", .command = (char *) "true",
                      .cwd = (char *) "/", .home = (char *) "/", .shell = (char *) "/bin/sh",
                      .user = (char *) "root", .unit = (char *) "", .mechanism = MECHANISM_SYSTEMD };
        launch_options_defaults(&s);
        s.stop_grace_usec = 600 * USEC_PER_SEC;
        _cleanup_free_ char *json = NULL;
        cr_assert_eq(job_spec_to_json(&s, &json), 0);
        char *p = strstr(json, "600000000");
        cr_assert_not_null(p, "%s", json);
        p[8] = '1'; /* 600000001 */
        JobSpec t = {};
        cr_assert_eq(job_spec_from_json(json, &t), -EBADMSG);

        _cleanup_free_ char *bad = NULL;
        s.tty_rows = 0;
        cr_assert_eq(job_spec_to_json(&s, &bad), -EINVAL, "a terminal of 0 rows is not written");
        cr_assert_null(bad);
}
