/* SPDX-License-Identifier: MIT */
/* bgrun attach: the terminal of a --tty job, again, as run --tty --wait
 * gave it (^] three times detaches again). */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "attach.h"
#include "call.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "record.h"
#include "verbs.h"

int verb_attach(sd_bus *bus, const Args *args) {
        _cleanup_json_ json_object *rec = NULL, *end = NULL;
        const char *id = args->words[1], *input;
        AttachOptions o = { .output = true, .input = true, .tty = true, .from_end = true };
        int r;

        r = get_record(bus, id, &rec);
        if (r < 0)
                return r;
        input = dict_get_string(rec, &record_keys[RECORD_KEY_STDIN]);
        if (!input || !streq(input, "tty"))
                return call_failure(BGRUN_EXIT_INVALID_INPUT, "InvalidArgs", -EINVAL,
                                    "Job %s has no terminal (it was not started with --tty): bgrun logs -f %s follows "
                                    "its output.", id, id);
        if (!record_is_running(rec))
                return call_failure(BGRUN_EXIT_INVALID_INPUT, "InvalidArgs", -EINVAL,
                                    "Job %s has ended: bgrun logs %s shows its output.", id, id);
        if (!isatty(STDIN_FILENO))
                return call_failure(BGRUN_EXIT_INVALID_INPUT, "InvalidArgs", -EINVAL,
                                    "bgrun attach needs a terminal; from a program, use bgrun send and bgrun logs --offset.");

        r = attach_block_signals(true);
        if (r < 0)
                return r;
        log_info("Attached to job %s. Press ^] three times within 1s to detach.", id);
        return attach_job(bus, id, &o, &end);
}
