/* SPDX-License-Identifier: MIT */
#pragma once

/* The proxy confines itself before it serves: no new privileges, no file
 * written, made or removed anywhere (Landlock), and no program executed
 * (seccomp: execve and execveat fail; a foreign architecture's or x32's
 * system call kills it). -errno when the kernel cannot: then it does not
 * serve. */
int proxy_confine(void);
