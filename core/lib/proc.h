/*
 * Processes by pid: a pid alone may name another process once the first
 * has ended, so the local node records a process's start time beside its
 * pid and checks both. Used by volrayd and by volray-shim (no other
 * dependency).
 */
#ifndef VOLRAY_PROC_H
#define VOLRAY_PROC_H

#include <sys/types.h>

/* Field 22 of /proc/PID/stat (clock ticks after boot), 0 if it is gone. */
unsigned long long proc_start_time(pid_t);

#endif
