/* SPDX-License-Identifier: MIT */
#pragma once

/* What launch-options.c and launch-options-json.c share of a row's value:
 * not for other files, which go through launch-options.h. */

#include "launch-options.h"

/* The field of row o in s. */
#define FIELD(s, o, type) ((type *) ((char *) (s) + (o)->offset))
#define CFIELD(s, o, type) ((type const *) ((const char *) (s) + (o)->offset))

/* A number's (or CHOICE's, or Stdin's) value in s, whatever its C type. */
uint64_t launch_number_of(const LaunchOptionInfo *o, const JobSpec *s);
void launch_set_number(const LaunchOptionInfo *o, JobSpec *s, uint64_t v);
/* 0 when l is a WORDS row's value (1 to max of its words, a '~' before
 * the first only), else which entry is not (1 first), or -1 for the count. */
int launch_words_invalid(const LaunchOptionInfo *o, char *const *l);
/* A CHOICE's value for word, or -EINVAL. */
int launch_word_value(const LaunchOptionInfo *o, const char *word);
