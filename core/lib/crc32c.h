/*
 * CRC32C (Castagnoli): hardware (SSE4.2) when the CPU has it, else
 * slicing-by-8 tables. The log (wal.c) seals every record and snapshot
 * with it.
 */
#ifndef VOLRAY_CRC32C_H
#define VOLRAY_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Build the tables and choose an implementation; call before any
 * crc32c_update. Safe to call more than once and from any thread. */
void crc32c_init(void);
/* Extend crc (0 to start) over len bytes of buf and return the new CRC. */
uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len);

#endif
