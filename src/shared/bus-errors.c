/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bgrun/bus-api.h"
#include "bus-errors.h"
#include "macro.h"

#define KIND_NAME(code, word, ...) [BGRUN_E_##code] = BUS_ERROR_PREFIX word,
static const char *const names[_BGRUN_E_KINDS_END] = { BGRUN_ERROR_KINDS(KIND_NAME) };
#undef KIND_NAME

const char *bus_error_name(BgrunErrorCode code) {
        const BgrunErrorInfo *i = bgrun_error_info(code);
        if (!i)
                return NULL;
        /* The one not of ours: the bus's own word for bad input. */
        return i->kind == BGRUN_E_INVALID_ARGS ? BGRUN_ERROR_INVALID_ARGS : names[i->kind];
}

int bus_errors_register(void) {
        static sd_bus_error_map map[_BGRUN_E_KINDS_END + 1];
        static bool done;
        if (done)
                return 0;
        size_t n = 0;
        for (BgrunErrorCode c = _BGRUN_E_NONE + 1; c < _BGRUN_E_KINDS_END; c++)
                if (c != BGRUN_E_INVALID_ARGS) /* sd-bus maps it to EINVAL already */
                        map[n++] = (sd_bus_error_map) { .name = names[c], .code = BGRUN_ERROR_BASE + (int) c };
        map[n] = (sd_bus_error_map) SD_BUS_ERROR_MAP_END;
        int r = sd_bus_error_add_map(map);
        if (r < 0)
                return r;
        done = true;
        return 0;
}

int bus_error_set(sd_bus_error *e, int r, const char *format, ...) {
        char message[1024];
        va_list ap;
        va_start(ap, format);
        vsnprintf(message, sizeof message, format, ap);
        va_end(ap);
        const char *name = bus_error_name(bgrun_error_code(r));
        if (!name)
                return sd_bus_error_set_errnof(e, r, "%s", message);
        (void) sd_bus_error_set(e, name, message);
        return -EIO;
}

const BgrunErrorInfo *bus_error_info(const sd_bus_error *e) {
        if (!sd_bus_error_is_set(e))
                return NULL;
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_ACCESS_DENIED))
                return bgrun_error_info(BGRUN_E_ACCESS_DENIED);
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_INVALID_ARGS))
                return bgrun_error_info(BGRUN_E_INVALID_ARGS);
        if (strncmp(e->name, BUS_ERROR_PREFIX, strlen(BUS_ERROR_PREFIX)) != 0)
                return NULL;
        return bgrun_error_by_word(e->name + strlen(BUS_ERROR_PREFIX));
}
