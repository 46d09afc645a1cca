/*
 * CRC32C (Castagnoli), reflected polynomial 0x82f63b78, as the log and its
 * snapshots use it to detect torn and corrupt records.
 *
 * crc32c_init builds slicing-by-8 tables and picks the SSE4.2 crc32
 * instruction when the CPU has it, else the tables; after that crc32c_update
 * is one indirect call. Building with -DCRC32C_SOFTWARE forces the tables,
 * to test them on any machine.
 */
#include <stdint.h>
#include <string.h>
#include <uv.h>

#if (defined(__x86_64__) || defined(__i386__)) && !defined(CRC32C_SOFTWARE)
#include <nmmintrin.h>
#define HAVE_SSE42_CRC
#endif

#include "lib/crc32c.h"

static uint32_t crc_table[8][256];
static uint32_t (*crc_fn)(uint32_t, const void *, size_t);
static uv_once_t crc_once = UV_ONCE_INIT;

/* Table-driven CRC32C, eight bytes per step (slicing-by-8). */
static uint32_t
crc_sw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t v;

	crc = ~crc;
	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (len >= 8) {
		memcpy(&v, p, 8);
		v ^= crc;
		crc = crc_table[7][v & 0xff] ^
		    crc_table[6][(v >> 8) & 0xff] ^
		    crc_table[5][(v >> 16) & 0xff] ^
		    crc_table[4][(v >> 24) & 0xff] ^
		    crc_table[3][(v >> 32) & 0xff] ^
		    crc_table[2][(v >> 40) & 0xff] ^
		    crc_table[1][(v >> 48) & 0xff] ^
		    crc_table[0][v >> 56];
		p += 8;
		len -= 8;
	}
#else
	(void)v;
#endif
	while (len-- > 0)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

#ifdef HAVE_SSE42_CRC
/* CRC32C with the SSE4.2 crc32 instruction, eight bytes per instruction. */
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc, v;

	while (len > 0 && ((uintptr_t)p & 7) != 0) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 32) {
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		memcpy(&v, p + 8, 8);
		c = _mm_crc32_u64(c, v);
		memcpy(&v, p + 16, 8);
		c = _mm_crc32_u64(c, v);
		memcpy(&v, p + 24, 8);
		c = _mm_crc32_u64(c, v);
		p += 32;
		len -= 32;
	}
	while (len >= 8) {
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len-- > 0)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

/* Build the tables and pick the fastest implementation this CPU runs. */
static void
crc_init(void)
{
	uint32_t c;
	int i, j;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++) {
		for (j = 1; j < 8; j++)
			crc_table[j][i] = (crc_table[j - 1][i] >> 8) ^
			    crc_table[0][crc_table[j - 1][i] & 0xff];
	}
	crc_fn = crc_sw;
#ifdef HAVE_SSE42_CRC
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2"))
		crc_fn = crc_hw;
#endif
}

/* Run crc_init once, whichever thread asks first. */
void
crc32c_init(void)
{
	uv_once(&crc_once, crc_init);
}

uint32_t
crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	return crc_fn(crc, buf, len);
}
