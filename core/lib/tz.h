/*
 * IANA time zones from the system's zone files (tz.c).
 */
#ifndef VOLRAY_TZ_H
#define VOLRAY_TZ_H

#include <stdint.h>

/*
 * The UTC offset in seconds of zone ("Europe/Berlin", "UTC") at Unix
 * time t: 0, or -ENOENT for a zone that does not exist, -EINVAL for a
 * name that is not one ("Local", "../x") or a file that is not TZif.
 */
int tz_offset(const char *zone, int64_t t, int *offset);

#endif
