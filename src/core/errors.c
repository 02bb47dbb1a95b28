/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errors.h"
#include "macro.h"

#define KIND_ROW(code, word_, exit_, what_, cli_, mcp_)                                                         \
        [BGRUN_E_##code] = { .kind = BGRUN_E_##code, .word = word_, .exit_status = exit_, .what = what_,        \
                             .cli_advice = cli_, .mcp_advice = mcp_ },
static const BgrunErrorInfo rows[_BGRUN_E_KINDS_END] = { BGRUN_ERROR_KINDS(KIND_ROW) };
#undef KIND_ROW

#define CONDITION_KIND(code, kind) [BGRUN_E_##code - _BGRUN_E_KINDS_END - 1] = BGRUN_E_##kind,
static const BgrunErrorCode condition_kind[_BGRUN_E_MAX - _BGRUN_E_KINDS_END - 1] = {
        BGRUN_ERROR_CONDITIONS(CONDITION_KIND)
};
#undef CONDITION_KIND

BgrunErrorCode bgrun_error_code(int r) {
        int code = -r - BGRUN_ERROR_BASE;
        return code > _BGRUN_E_NONE && code < _BGRUN_E_MAX && code != _BGRUN_E_KINDS_END ? (BgrunErrorCode) code
                                                                                            : _BGRUN_E_NONE;
}

const BgrunErrorInfo *bgrun_error_info(BgrunErrorCode code) {
        if (code > _BGRUN_E_NONE && code < _BGRUN_E_KINDS_END)
                return &rows[code];
        if (code > _BGRUN_E_KINDS_END && code < _BGRUN_E_MAX)
                return &rows[condition_kind[code - _BGRUN_E_KINDS_END - 1]];
        return NULL;
}

const BgrunErrorInfo *bgrun_error_by_word(const char *word) {
        for (BgrunErrorCode c = _BGRUN_E_NONE + 1; word && c < _BGRUN_E_KINDS_END; c++)
                if (streq(rows[c].word, word))
                        return &rows[c];
        return NULL;
}

/* message without a "<prefix>: " it begins with (case aside). */
static const char *without_prefix(const char *message, const char *prefix) {
        size_t n = strlen(prefix);
        return strncasecmp(message, prefix, n) == 0 && strncmp(message + n, ": ", 2) == 0 ? message + n + 2 : message;
}

char *bgrun_error_line(const BgrunErrorInfo *info, const char *message, const char *advice) {
        message = without_prefix(without_prefix(message ?: "", "Request authority denied"), info->what);
        advice = advice ?: "";
        size_t n = strlen(message);
        /* "<what>: <message>", then a full stop before the advice. */
        const char *said = n ? message : "", *colon = n ? ": " : "";
        const char *stop = !*advice || (n && message[n - 1] == '.') ? "" : ".";
        char *line;
        if (asprintf(&line, "%s%s%s%s%s%s", info->what, colon, said, stop, *advice ? " " : "", advice) < 0)
                return NULL;
        return line;
}
