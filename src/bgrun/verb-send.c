/* SPDX-License-Identifier: MIT */
/* bgrun send: a line, or the end, written to a job's input. */

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "attach.h"
#include "verbs.h"

int verb_send(sd_bus *bus, const Args *args) {
        const char *id = args->words[1];
        int r;

        if (args->n_words > 2) {
                const char *text = args->words[2];
                size_t len = strlen(text);
                _cleanup_free_ char *line = malloc(len + 2);

                if (!line)
                        return log_oom();
                memcpy(line, text, len);
                if (!args->no_newline)
                        line[len++] = '\n';

                r = write_input(bus, id, line, len, args->eof, true);
                return r < 0 ? r : EXIT_SUCCESS;
        }

        r = write_input(bus, id, NULL, 0, true, true);
        return r < 0 ? r : EXIT_SUCCESS;
}
