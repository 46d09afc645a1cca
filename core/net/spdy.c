/*
 * SPDY/3.1 framing (spdy.h). Every frame starts with 8 bytes: a control
 * frame has the top bit set, the version (3) and its type, then flags and
 * a 24-bit length; a DATA frame has the stream id instead, then flags
 * (FIN) and the length. Control frames are read whole (at most 1 MiB);
 * a DATA frame is handed over as its bytes arrive, so its length field
 * never makes us allocate. Header blocks (SYN_STREAM, SYN_REPLY,
 * HEADERS) are one zlib stream per direction for the whole session, with
 * SPDY/3's dictionary; inflated, a block is a 32-bit count, then for each
 * header a 32-bit length and the name, a 32-bit length and the value.
 * An inflated block over 256 KiB or with more than 1024 headers is a
 * protocol error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/spdy.h"

#define HEAD		8
#define MAX_CONTROL	(1024 * 1024)
#define MAX_HEADERS	(256 * 1024)
#define MAX_PAIRS	1024
#define MAX_DATA_FRAME	(64 * 1024)

enum {
	T_SYN_STREAM = 1, T_SYN_REPLY, T_RST_STREAM, T_SETTINGS, T_NOOP,
	T_PING, T_GOAWAY, T_HEADERS, T_WINDOW_UPDATE
};
#define FLAG_FIN	0x01

struct spdy_session {
	struct spdy_callbacks cb;
	void *arg;
	z_stream in, out;
	int in_ok, out_ok;
	unsigned char head[HEAD];	/* the frame header being read */
	size_t headlen;
	unsigned char *ctl;		/* a control frame's body */
	size_t ctlcap, ctllen, ctlwant;
	uint32_t data_id;		/* a DATA frame's stream, while read */
	size_t data_left;
	int data_fin;
	int in_data;
	int in_ctl;
	int dead;
};

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

spdy_session *
spdy_session_new(const struct spdy_callbacks *cb, void *arg)
{
	spdy_session *s = xcalloc(1, sizeof *s);

	s->cb = *cb;
	s->arg = arg;
	if (inflateInit(&s->in) == Z_OK)
		s->in_ok = 1;
	if (deflateInit(&s->out, Z_DEFAULT_COMPRESSION) == Z_OK &&
	    deflateSetDictionary(&s->out, spdy_dictionary,
	    SPDY_DICTIONARY_LEN) == Z_OK)
		s->out_ok = 1;
	return s;
}

void
spdy_session_free(spdy_session *s)
{
	if (s == NULL)
		return;
	if (s->in_ok)
		inflateEnd(&s->in);
	if (s->out_ok)
		deflateEnd(&s->out);
	free(s->ctl);
	free(s);
}

static int
protocol_error(spdy_session *s, char **cause, const char *what)
{
	s->dead = 1;
	if (cause != NULL)
		*cause = util_printf("spdy: %s", what);
	return -1;
}

/* Inflate a header block into a fresh buffer; -1 when it is bad. */
static int
inflate_block(spdy_session *s, const unsigned char *p, size_t len,
    unsigned char **out, size_t *outlen)
{
	unsigned char *buf = xmalloc(MAX_HEADERS);
	int r;

	if (!s->in_ok) {
		free(buf);
		return -1;
	}
	s->in.next_in = (unsigned char *)p;
	s->in.avail_in = (uInt)len;
	s->in.next_out = buf;
	s->in.avail_out = MAX_HEADERS;
	for (;;) {
		r = inflate(&s->in, Z_SYNC_FLUSH);
		if (r == Z_NEED_DICT) {
			if (inflateSetDictionary(&s->in, spdy_dictionary,
			    SPDY_DICTIONARY_LEN) != Z_OK)
				break;
			continue;
		}
		if (r == Z_OK && s->in.avail_in > 0 && s->in.avail_out > 0)
			continue;
		break;
	}
	if ((r != Z_OK && r != Z_BUF_ERROR) || s->in.avail_in != 0) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = MAX_HEADERS - s->in.avail_out;
	return 0;
}

/* A header block into names and values (pointers into blk, each made a
   string); the count, or -1. */
static int
parse_block(unsigned char *blk, size_t len, char **names, char **values)
{
	size_t off = 4, i, n, l;
	int k = 0;

	if (len < 4 || (n = get32(blk)) > MAX_PAIRS)
		return -1;
	for (i = 0; i < n; i++) {
		char **dst[2] = { &names[k], &values[k] };
		int j;

		for (j = 0; j < 2; j++) {
			if (len - off < 4)
				return -1;
			l = get32(blk + off);
			off += 4;
			if (l > len - off)
				return -1;
			/* Shift down one byte to make room for the NUL. */
			memmove(blk + off - 1, blk + off, l);
			blk[off - 1 + l] = '\0';
			*dst[j] = (char *)blk + off - 1;
			off += l;
		}
		k++;
	}
	return off == len ? k : -1;
}

static int
syn_stream(spdy_session *s, uint8_t flags, const unsigned char *p,
    size_t len, char **cause)
{
	char *names[MAX_PAIRS], *values[MAX_PAIRS];
	unsigned char *blk;
	size_t blen;
	uint32_t id;
	int n;

	if (len < 10)
		return protocol_error(s, cause, "short SYN_STREAM");
	id = get32(p) & 0x7fffffff;
	if (id == 0)
		return protocol_error(s, cause, "SYN_STREAM for stream 0");
	if (inflate_block(s, p + 10, len - 10, &blk, &blen) != 0)
		return protocol_error(s, cause, "bad header block");
	if ((n = parse_block(blk, blen, names, values)) < 0) {
		free(blk);
		return protocol_error(s, cause, "bad header block");
	}
	s->cb.on_stream(s->arg, id, (const char *const *)names,
	    (const char *const *)values, n, flags & FLAG_FIN);
	free(blk);
	return 0;
}

/* A whole control frame. */
static int
control(spdy_session *s, char **cause)
{
	uint16_t version = (uint16_t)((s->head[0] & 0x7f) << 8 | s->head[1]);
	uint16_t type = (uint16_t)(s->head[2] << 8 | s->head[3]);
	uint8_t flags = s->head[4];
	const unsigned char *p = s->ctl;
	size_t len = s->ctllen;
	unsigned char pong[12];

	if (version != 3)
		return protocol_error(s, cause, "not SPDY/3");
	switch (type) {
	case T_SYN_STREAM:
		return syn_stream(s, flags, p, len, cause);
	case T_RST_STREAM:
		if (len < 8)
			return protocol_error(s, cause, "short RST_STREAM");
		s->cb.on_reset(s->arg, get32(p) & 0x7fffffff, get32(p + 4));
		return 0;
	case T_PING:
		if (len != 4)
			return protocol_error(s, cause, "bad PING");
		memcpy(pong, s->head, HEAD);
		memcpy(pong + HEAD, p, 4);
		s->cb.send(s->arg, (const char *)pong, sizeof pong);
		return 0;
	case T_GOAWAY:
		s->cb.on_goaway(s->arg);
		return 0;
	case T_HEADERS:
	case T_SYN_REPLY:
		/* Nothing we need; the compression state must follow. */
		if (len >= 4) {
			unsigned char *blk;
			size_t blen;

			if (inflate_block(s, p + 4, len - 4, &blk, &blen) != 0)
				return protocol_error(s, cause,
				    "bad header block");
			free(blk);
		}
		return 0;
	default:
		/* SETTINGS, NOOP, WINDOW_UPDATE, and unknown types. */
		return 0;
	}
}

int
spdy_session_feed(spdy_session *s, const char *data, size_t len,
    char **cause)
{
	const unsigned char *p = (const unsigned char *)data;
	size_t k, flen;

	if (s->dead)
		return protocol_error(s, cause, "session ended");
	while (len > 0 && !s->dead) {
		if (s->in_data) {
			k = len < s->data_left ? len : s->data_left;
			s->data_left -= k;
			if (k > 0 || s->data_left == 0)
				s->cb.on_data(s->arg, s->data_id,
				    (const char *)p, k,
				    s->data_left == 0 && s->data_fin);
			p += k;
			len -= k;
			if (s->data_left == 0)
				s->in_data = 0;
			continue;
		}
		if (s->in_ctl) {
			k = s->ctlwant - s->ctllen;
			if (k > len)
				k = len;
			memcpy(s->ctl + s->ctllen, p, k);
			s->ctllen += k;
			p += k;
			len -= k;
			if (s->ctllen == s->ctlwant) {
				s->in_ctl = 0;
				if (control(s, cause) != 0)
					return -1;
			}
			continue;
		}
		k = HEAD - s->headlen;
		if (k > len)
			k = len;
		memcpy(s->head + s->headlen, p, k);
		s->headlen += k;
		p += k;
		len -= k;
		if (s->headlen < HEAD)
			break;
		s->headlen = 0;
		flen = (size_t)s->head[5] << 16 | (size_t)s->head[6] << 8 |
		    s->head[7];
		if (s->head[0] & 0x80) {
			if (flen > MAX_CONTROL)
				return protocol_error(s, cause,
				    "control frame too long");
			if (flen > s->ctlcap) {
				s->ctl = xrealloc(s->ctl, flen);
				s->ctlcap = flen;
			}
			s->ctllen = 0;
			s->ctlwant = flen;
			if (flen == 0) {
				if (control(s, cause) != 0)
					return -1;
			} else
				s->in_ctl = 1;
		} else {
			s->data_id = get32(s->head) & 0x7fffffff;
			s->data_left = flen;
			s->data_fin = s->head[4] & FLAG_FIN;
			if (s->data_id == 0)
				return protocol_error(s, cause,
				    "DATA for stream 0");
			if (flen == 0)
				s->cb.on_data(s->arg, s->data_id, "", 0,
				    s->data_fin);
			else
				s->in_data = 1;
		}
	}
	return s->dead ? -1 : 0;
}

/* The 8-byte header of a control frame. */
static void
ctl_head(unsigned char *h, uint16_t type, uint8_t flags, size_t len)
{
	h[0] = 0x80;
	h[1] = 3;
	h[2] = (unsigned char)(type >> 8);
	h[3] = (unsigned char)type;
	h[4] = flags;
	h[5] = (unsigned char)(len >> 16);
	h[6] = (unsigned char)(len >> 8);
	h[7] = (unsigned char)len;
}

/* Compress a header block (sync flush) after pre bytes of frame into
   *out; its total length. */
static size_t
deflate_block(spdy_session *s, size_t pre, const char *const *names,
    const char *const *values, int n, unsigned char **out)
{
	size_t raw = 4, i, off, cap, k;
	unsigned char *r, *buf;

	for (i = 0; i < (size_t)n; i++)
		raw += 8 + strlen(names[i]) + strlen(values[i]);
	r = xmalloc(raw);
	put32(r, (uint32_t)n);
	off = 4;
	for (i = 0; i < (size_t)n; i++) {
		k = strlen(names[i]);
		put32(r + off, (uint32_t)k);
		memcpy(r + off + 4, names[i], k);
		off += 4 + k;
		k = strlen(values[i]);
		put32(r + off, (uint32_t)k);
		memcpy(r + off + 4, values[i], k);
		off += 4 + k;
	}
	cap = pre + deflateBound(&s->out, raw) + 64;
	buf = xmalloc(cap);
	s->out.next_in = r;
	s->out.avail_in = (uInt)raw;
	s->out.next_out = buf + pre;
	s->out.avail_out = (uInt)(cap - pre);
	deflate(&s->out, Z_SYNC_FLUSH);
	free(r);
	*out = buf;
	return cap - s->out.avail_out;
}

static void
send_block(spdy_session *s, uint16_t type, uint32_t id, size_t extra,
    const char *const *names, const char *const *values, int n, int fin)
{
	unsigned char *buf;
	size_t len, pre = HEAD + 4 + extra;

	if (!s->out_ok)
		return;
	len = deflate_block(s, pre, names, values, n, &buf);
	ctl_head(buf, type, fin ? FLAG_FIN : 0, len - HEAD);
	put32(buf + HEAD, id & 0x7fffffff);
	memset(buf + HEAD + 4, 0, extra);
	s->cb.send(s->arg, (const char *)buf, len);
	free(buf);
}

void
spdy_reply(spdy_session *s, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin)
{
	send_block(s, T_SYN_REPLY, id, 0, names, values, n, fin);
}

void
spdy_open(spdy_session *s, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin)
{
	/* Associated stream id, priority and slot: zero. */
	send_block(s, T_SYN_STREAM, id, 6, names, values, n, fin);
}

void
spdy_data(spdy_session *s, uint32_t id, const char *data, size_t len,
    int fin)
{
	unsigned char h[HEAD];
	char *frame;
	size_t k;

	do {
		k = len < MAX_DATA_FRAME ? len : MAX_DATA_FRAME;
		put32(h, id & 0x7fffffff);
		h[4] = fin && k == len ? FLAG_FIN : 0;
		h[5] = (unsigned char)(k >> 16);
		h[6] = (unsigned char)(k >> 8);
		h[7] = (unsigned char)k;
		frame = xmalloc(HEAD + k);
		memcpy(frame, h, HEAD);
		if (k > 0)
			memcpy(frame + HEAD, data, k);
		s->cb.send(s->arg, frame, HEAD + k);
		free(frame);
		data += k;
		len -= k;
	} while (len > 0);
}

static void
send_ctl(spdy_session *s, uint16_t type, const unsigned char *body,
    size_t len)
{
	unsigned char f[HEAD + 8];

	ctl_head(f, type, 0, len);
	memcpy(f + HEAD, body, len);
	s->cb.send(s->arg, (const char *)f, HEAD + len);
}

void
spdy_reset(spdy_session *s, uint32_t id, uint32_t status)
{
	unsigned char b[8];

	put32(b, id & 0x7fffffff);
	put32(b + 4, status);
	send_ctl(s, T_RST_STREAM, b, 8);
}

void
spdy_ping(spdy_session *s, uint32_t id)
{
	unsigned char b[4];

	put32(b, id);
	send_ctl(s, T_PING, b, 4);
}

void
spdy_goaway(spdy_session *s, uint32_t status)
{
	unsigned char b[8];

	put32(b, 0);
	put32(b + 4, status);
	send_ctl(s, T_GOAWAY, b, 8);
}
