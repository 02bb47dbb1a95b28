/* SPDX-License-Identifier: MIT */
#pragma once

/* bgrun's side of the bus, for the files that use all of it: the
 * connection (connection.h), the calls on the Manager (manager-call.h) and
 * their failures told (call-error.h). */

#include "call-error.h"
#include "connection.h"
#include "manager-call.h"
