/* SPDX-License-Identifier: MIT */
/* A main() for a fuzz target in the plain build (gcc, no libFuzzer): runs
 * LLVMFuzzerTestOneInput() on the empty input and then on every file named,
 * and every file of every directory named (sorted, not recursing, dotfiles
 * skipped), and prints TAP, a line per input. A broken invariant aborts
 * (fuzz.h), a sanitizer report ends the process: the test fails with the
 * input's name printed just before. A directory without a file fails too,
 * since it replays nothing.
 *
 *   fuzz-TARGET PATH...      (meson test runs it on tests/fuzz/corpus/TARGET) */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned n_tests;

static int read_file(const char *path, uint8_t **ret, size_t *ret_size) {
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        size_t size = 0, allocated = 0;
        uint8_t *buf = NULL;
        int r = 0;
        for (;;) {
                if (allocated - size < 4096) {
                        allocated = allocated * 2 + 4096;
                        uint8_t *b = realloc(buf, allocated);
                        if (!b) {
                                r = -ENOMEM;
                                break;
                        }
                        buf = b;
                }
                size_t k = fread(buf + size, 1, allocated - size, f);
                size += k;
                if (k == 0) {
                        if (ferror(f))
                                r = -EIO;
                        break;
                }
        }
        fclose(f);
        if (r < 0) {
                free(buf);
                return r;
        }
        /* An exact copy in a buffer of its own size, so that ASan sees a
         * read past the input's end as libFuzzer would. */
        uint8_t *exact = malloc(size ? size : 1);
        if (!exact) {
                free(buf);
                return -ENOMEM;
        }
        if (size)
                memcpy(exact, buf, size);
        free(buf);
        *ret = exact;
        *ret_size = size;
        return 0;
}

static bool replay_file(const char *path) {
        uint8_t *data = NULL;
        size_t size = 0;
        int r = read_file(path, &data, &size);
        n_tests++;
        if (r < 0) {
                printf("not ok %u - %s: cannot read: %s\n", n_tests, path, strerror(-r));
                return false;
        }
        /* Named before it runs: a crash leaves this as the last line. */
        fprintf(stderr, "replaying %s (%zu bytes)\n", path, size);
        (void) LLVMFuzzerTestOneInput(data, size);
        free(data);
        printf("ok %u - %s\n", n_tests, path);
        fflush(stdout);
        return true;
}

static int skip_dotfiles(const struct dirent *de) {
        return de->d_name[0] != '.';
}

static bool replay_path(const char *path) {
        struct stat st;
        if (stat(path, &st) < 0) {
                printf("not ok %u - %s: %s\n", ++n_tests, path, strerror(errno));
                return false;
        }
        if (!S_ISDIR(st.st_mode))
                return replay_file(path);

        struct dirent **entries = NULL;
        int n = scandir(path, &entries, skip_dotfiles, alphasort);
        if (n < 0) {
                printf("not ok %u - %s: %s\n", ++n_tests, path, strerror(errno));
                return false;
        }
        bool ok = true;
        unsigned replayed = 0;
        for (int i = 0; i < n; i++) {
                char *p = NULL;
                if (asprintf(&p, "%s/%s", path, entries[i]->d_name) < 0)
                        abort();
                if (stat(p, &st) >= 0 && S_ISREG(st.st_mode)) {
                        ok = replay_file(p) && ok;
                        replayed++;
                }
                free(p);
                free(entries[i]);
        }
        free(entries);
        if (replayed == 0) {
                printf("not ok %u - %s: no input to replay\n", ++n_tests, path);
                return false;
        }
        return ok;
}

int main(int argc, char *argv[]) {
        if (argc < 2) {
                fprintf(stderr, "usage: %s CORPUS-DIR-OR-FILE...\n", argv[0]);
                return 2;
        }
        (void) LLVMFuzzerTestOneInput((const uint8_t *) "", 0);
        printf("ok %u - the empty input\n", ++n_tests);

        bool ok = true;
        for (int i = 1; i < argc; i++)
                ok = replay_path(argv[i]) && ok;
        printf("1..%u\n", n_tests);
        return ok ? 0 : 1;
}
