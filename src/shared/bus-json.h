/* SPDX-License-Identifier: MIT */
#pragma once

/* D-Bus values as JSON: one reader for anything bgrund sends, so a client
 * holds a reply as one JSON value, reads it by key and prints it as it came.
 *
 *   a{sv}, any a{s…}, a{o…}, a{g…}  object, keys in the order sent (a key sent
 *                                    twice: the last value, in the first's place)
 *   other arrays, structs            array
 *   a dict entry of another key type [key, value]
 *   v                                the value it holds
 *   b                                boolean
 *   y n q i u x t                    int (t: all 64 bits, unsigned)
 *   d                                double
 *   s o g                            string
 *   h                                refused (-EOPNOTSUPP): a descriptor's
 *                                    number means nothing outside this process
 *
 * No header of src/basic here: the benchmark includes this next to macros of
 * its own. */

#include <json-c/json.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

/* The deepest nesting of containers (arrays, structs, dict entries and
 * variants all count) that bus_json_read() follows. D-Bus allows 32 arrays
 * and 32 structs, sd-bus 128 containers of any kind; we stop at 64, so a
 * peer cannot make us recurse further. A record is 6 deep. */
#define BUS_JSON_DEPTH_MAX 64U

/* Reads the next complete value of m (at its current position, which may be
 * inside a container the caller entered) into a new JSON value. Returns 1
 * and *ret, or 0 at the end of the message or container (nothing read,
 * *ret untouched). Errors: -ELNRNG nested deeper than BUS_JSON_DEPTH_MAX,
 * -EOPNOTSUPP a file descriptor, -ENOMEM, or sd-bus' own error for a
 * malformed message. After an error m's read position is undefined. */
int bus_json_read(sd_bus_message *m, json_object **ret);

/* Whether v could be what bus_json_read() made of a value of the single
 * complete type signature. Only the outermost type is checked: for a
 * container, the caller checks what it takes out of it. */
bool bus_json_is_type(json_object *v, const char *signature);

/* The value of key in dict, if dict is an object that has key and its value
 * is of type signature (bus_json_is_type()); else NULL. Borrowed from dict. */
json_object *bus_json_get(json_object *dict, const char *key, const char *signature);
