//go:build cgo
// (The line above: package native compiles this file with cgo; a pure-Go build skips it.)
/* json.c - see json.h. */
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

#define ARENA_CHUNK (64 * 1024)

void *arena_alloc(arena *a, size_t n) {
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (n == 0) {
		n = sizeof(max_align_t);
	}
	if (a->head == NULL || a->head->cap - a->head->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		arena_chunk *c = malloc(sizeof(arena_chunk) + cap);
		if (c == NULL) {
			a->oom = 1;
			return NULL;
		}
		c->next = a->head;
		c->used = 0;
		c->cap = cap;
		a->head = c;
	}
	void *p = (char *)a->head->data + a->head->used;
	a->head->used += n;
	return p;
}

void arena_free(arena *a) {
	while (a->head != NULL) {
		arena_chunk *next = a->head->next;
		free(a->head);
		a->head = next;
	}
	a->oom = 0;
}

typedef struct {
	arena *a;
	const unsigned char *p, *end, *start;
	char *err;
	size_t errlen;
	int failed;
} parser;

static void fail(parser *ps, const char *msg) {
	if (!ps->failed) {
		snprintf(ps->err, ps->errlen, "invalid request JSON at offset %zu: %s", (size_t)(ps->p - ps->start), msg);
		ps->failed = 1;
	}
}

static void skip_space(parser *ps) {
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) {
		ps->p++;
	}
}

static int literal(parser *ps, const char *word) {
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
		ps->p += n;
		return 1;
	}
	return 0;
}

/* utf8_len returns the length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
	size_t avail = (size_t)(end - p);
	unsigned c = p[0];
	if (c < 0x80) {
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		return (avail >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
	}
	if (c >= 0xE0 && c <= 0xEF) {
		if (avail < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) {
			return 0;
		}
		if (c == 0xE0 && p[1] < 0xA0) {
			return 0; /* overlong */
		}
		if (c == 0xED && p[1] >= 0xA0) {
			return 0; /* surrogate */
		}
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if (avail < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) {
			return 0;
		}
		if (c == 0xF0 && p[1] < 0x90) {
			return 0; /* overlong */
		}
		if (c == 0xF4 && p[1] >= 0x90) {
			return 0; /* above U+10FFFF */
		}
		return 4;
	}
	return 0;
}

static int hex4(parser *ps, unsigned *out) {
	if (ps->end - ps->p < 4) {
		fail(ps, "short \\u escape");
		return 0;
	}
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		unsigned c = ps->p[i];
		v <<= 4;
		if (c >= '0' && c <= '9') {
			v |= c - '0';
		} else if (c >= 'a' && c <= 'f') {
			v |= c - 'a' + 10;
		} else if (c >= 'A' && c <= 'F') {
			v |= c - 'A' + 10;
		} else {
			fail(ps, "invalid \\u escape");
			return 0;
		}
	}
	ps->p += 4;
	*out = v;
	return 1;
}

static size_t put_utf8(unsigned char *o, unsigned r) {
	if (r < 0x80) {
		o[0] = (unsigned char)r;
		return 1;
	}
	if (r < 0x800) {
		o[0] = (unsigned char)(0xC0 | (r >> 6));
		o[1] = (unsigned char)(0x80 | (r & 0x3F));
		return 2;
	}
	if (r < 0x10000) {
		o[0] = (unsigned char)(0xE0 | (r >> 12));
		o[1] = (unsigned char)(0x80 | ((r >> 6) & 0x3F));
		o[2] = (unsigned char)(0x80 | (r & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | (r >> 18));
	o[1] = (unsigned char)(0x80 | ((r >> 12) & 0x3F));
	o[2] = (unsigned char)(0x80 | ((r >> 6) & 0x3F));
	o[3] = (unsigned char)(0x80 | (r & 0x3F));
	return 4;
}

/* parse_string decodes the string at ps->p (which is '"'). A decoded string is never longer
 * than its source, so one allocation of the source length suffices. */
static int parse_string(parser *ps, json_str *out) {
	ps->p++;
	const unsigned char *q = ps->p;
	while (q < ps->end && *q != '"') {
		q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
	}
	unsigned char *o = arena_alloc(ps->a, (size_t)(q - ps->p) + 1);
	if (o == NULL) {
		fail(ps, "out of memory");
		return 0;
	}
	size_t n = 0;
	for (;;) {
		if (ps->p >= ps->end) {
			fail(ps, "unterminated string");
			return 0;
		}
		unsigned c = *ps->p;
		if (c == '"') {
			ps->p++;
			break;
		}
		if (c < 0x20) {
			fail(ps, "control character in a string");
			return 0;
		}
		if (c != '\\') {
			size_t l = utf8_len(ps->p, ps->end);
			if (l == 0) {
				fail(ps, "invalid UTF-8 in a string");
				return 0;
			}
			memcpy(o + n, ps->p, l);
			n += l;
			ps->p += l;
			continue;
		}
		if (ps->end - ps->p < 2) {
			fail(ps, "unterminated escape");
			return 0;
		}
		unsigned e = ps->p[1];
		ps->p += 2;
		switch (e) {
		case '"': o[n++] = '"'; break;
		case '\\': o[n++] = '\\'; break;
		case '/': o[n++] = '/'; break;
		case 'b': o[n++] = '\b'; break;
		case 'f': o[n++] = '\f'; break;
		case 'n': o[n++] = '\n'; break;
		case 'r': o[n++] = '\r'; break;
		case 't': o[n++] = '\t'; break;
		case 'u': {
			unsigned r;
			if (!hex4(ps, &r)) {
				return 0;
			}
			if (r >= 0xD800 && r <= 0xDBFF) {
				unsigned lo;
				if (!literal(ps, "\\u") || !hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
					fail(ps, "lone surrogate escape");
					return 0;
				}
				r = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
			} else if (r >= 0xDC00 && r <= 0xDFFF) {
				fail(ps, "lone surrogate escape");
				return 0;
			}
			n += put_utf8(o + n, r);
			break;
		}
		default:
			ps->p -= 2;
			fail(ps, "invalid escape");
			return 0;
		}
	}
	o[n] = 0;
	out->s = (const char *)o;
	out->len = n;
	return 1;
}

static int digits(parser *ps) {
	const unsigned char *s = ps->p;
	while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
		ps->p++;
	}
	return ps->p > s;
}

static int parse_number(parser *ps, json_value *v) {
	const unsigned char *s = ps->p;
	if (ps->p < ps->end && *ps->p == '-') {
		ps->p++;
	}
	if (ps->p < ps->end && *ps->p == '0') {
		ps->p++;
	} else if (!digits(ps)) {
		fail(ps, "invalid number");
		return 0;
	}
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (!digits(ps)) {
			fail(ps, "invalid number");
			return 0;
		}
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) {
			ps->p++;
		}
		if (!digits(ps)) {
			fail(ps, "invalid number");
			return 0;
		}
	}
	size_t n = (size_t)(ps->p - s);
	char *text = arena_alloc(ps->a, n + 1);
	if (text == NULL) {
		fail(ps, "out of memory");
		return 0;
	}
	memcpy(text, s, n);
	text[n] = 0;
	v->type = J_NUMBER;
	v->string.s = text;
	v->string.len = n;
	v->number = strtod(text, NULL);
	return 1;
}

/* list is a growable array of pointers in the arena, used while reading a container. */
typedef struct {
	json_value **items;
	json_str *keys;
	size_t len, cap;
} list;

static int list_push(parser *ps, list *l, json_value *item, const json_str *key) {
	if (l->len == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		json_value **items = arena_alloc(ps->a, cap * sizeof *items);
		json_str *keys = key ? arena_alloc(ps->a, cap * sizeof *keys) : NULL;
		if (items == NULL || (key && keys == NULL)) {
			fail(ps, "out of memory");
			return 0;
		}
		if (l->len) {
			memcpy(items, l->items, l->len * sizeof *items);
			if (key) {
				memcpy(keys, l->keys, l->len * sizeof *keys);
			}
		}
		l->items = items;
		l->keys = keys;
		l->cap = cap;
	}
	l->items[l->len] = item;
	if (key) {
		l->keys[l->len] = *key;
	}
	l->len++;
	return 1;
}

static json_value *parse_value(parser *ps, int depth);

static json_value *parse_container(parser *ps, json_value *v, int depth) {
	int object = *ps->p == '{';
	unsigned char close = object ? '}' : ']';
	list l = {0};
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
	} else {
		for (;;) {
			json_str key = {0};
			if (object) {
				skip_space(ps);
				if (ps->p >= ps->end || *ps->p != '"') {
					fail(ps, "want a key");
					return NULL;
				}
				if (!parse_string(ps, &key)) {
					return NULL;
				}
				for (size_t i = 0; i < l.len; i++) {
					if (l.keys[i].len == key.len && memcmp(l.keys[i].s, key.s, key.len) == 0) {
						fail(ps, "duplicate key");
						return NULL;
					}
				}
				skip_space(ps);
				if (ps->p >= ps->end || *ps->p != ':') {
					fail(ps, "want ':'");
					return NULL;
				}
				ps->p++;
			}
			json_value *item = parse_value(ps, depth + 1);
			if (item == NULL || !list_push(ps, &l, item, object ? &key : NULL)) {
				return NULL;
			}
			skip_space(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == close) {
				ps->p++;
				break;
			}
			fail(ps, object ? "want ',' or '}'" : "want ',' or ']'");
			return NULL;
		}
	}
	v->type = object ? J_OBJECT : J_ARRAY;
	v->items = l.items;
	v->keys = l.keys;
	v->len = l.len;
	return v;
}

static json_value *parse_value(parser *ps, int depth) {
	if (depth > JSON_MAX_DEPTH) {
		fail(ps, "nesting too deep");
		return NULL;
	}
	json_value *v = arena_alloc(ps->a, sizeof *v);
	if (v == NULL) {
		fail(ps, "out of memory");
		return NULL;
	}
	memset(v, 0, sizeof *v);
	skip_space(ps);
	if (ps->p >= ps->end) {
		fail(ps, "unexpected end of input");
		return NULL;
	}
	switch (*ps->p) {
	case '{':
	case '[':
		return parse_container(ps, v, depth);
	case '"':
		v->type = J_STRING;
		return parse_string(ps, &v->string) ? v : NULL;
	case 't':
	case 'f':
	case 'n':
		if (literal(ps, "true")) {
			v->type = J_BOOL;
			v->boolean = 1;
		} else if (literal(ps, "false")) {
			v->type = J_BOOL;
		} else if (literal(ps, "null")) {
			v->type = J_NULL;
		} else {
			fail(ps, "invalid literal");
			return NULL;
		}
		return v;
	default:
		return parse_number(ps, v) ? v : NULL;
	}
}

json_value *json_parse(arena *a, const char *data, size_t len, char *err, size_t errlen) {
	parser ps = {a, (const unsigned char *)data, (const unsigned char *)data + len, (const unsigned char *)data, err, errlen, 0};
	json_value *v = parse_value(&ps, 0);
	if (v == NULL) {
		return NULL;
	}
	skip_space(&ps);
	if (ps.p != ps.end) {
		fail(&ps, "trailing data after the request");
		return NULL;
	}
	return v;
}

json_value *json_get(const json_value *o, const char *key) {
	if (o == NULL || o->type != J_OBJECT) {
		return NULL;
	}
	size_t n = strlen(key);
	for (size_t i = 0; i < o->len; i++) {
		if (o->keys[i].len == n && memcmp(o->keys[i].s, key, n) == 0) {
			return o->items[i];
		}
	}
	return NULL;
}

static void buf_grow(buffer *b, size_t n) {
	if (b->oom || b->cap - b->len >= n) {
		return;
	}
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2) {
			b->oom = 1;
			return;
		}
		cap *= 2;
	}
	char *p = realloc(b->p, cap);
	if (p == NULL) {
		b->oom = 1;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void buf_bytes(buffer *b, const char *s, size_t n) {
	buf_grow(b, n);
	if (!b->oom) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

void buf_str(buffer *b, const char *s) { buf_bytes(b, s, strlen(s)); }

void buf_json_string(buffer *b, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t start = 0;
	buf_bytes(b, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned c = u[i];
		char esc[7];
		size_t elen = 0;
		size_t skip = 1;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			elen = 2;
		} else if (c == '\n') {
			memcpy(esc, "\\n", 2);
			elen = 2;
		} else if (c == '\r') {
			memcpy(esc, "\\r", 2);
			elen = 2;
		} else if (c == '\t') {
			memcpy(esc, "\\t", 2);
			elen = 2;
		} else if (c < 0x20 || c == 0x7f) {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			elen = 6;
		} else if (c == 0xE2 && i + 2 < n && u[i + 1] == 0x80 && (u[i + 2] == 0xA8 || u[i + 2] == 0xA9)) {
			memcpy(esc, "\\u202", 5);
			esc[5] = u[i + 2] == 0xA8 ? '8' : '9';
			elen = 6;
			skip = 3;
		}
		if (elen) {
			buf_bytes(b, s + start, i - start);
			buf_bytes(b, esc, elen);
			i += skip - 1;
			start = i + 1;
		}
	}
	buf_bytes(b, s + start, n - start);
	buf_bytes(b, "\"", 1);
}

void buf_free(buffer *b) {
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = 0;
}
