//go:build cgo
// (The line above: package native compiles this file with cgo; a pure-Go build skips it.)
/*
 * json.h - a strict, minimal JSON reader and writer for the mcpjson plugin.
 *
 * The reader builds a tree in an arena. It is strict: duplicate object keys, invalid UTF-8,
 * lone surrogate escapes, raw control characters in strings, malformed numbers, nesting deeper
 * than JSON_MAX_DEPTH and anything after the top-level value are errors. Strings are decoded to
 * UTF-8 with an explicit length (they may hold NUL).
 *
 * Not thread-safe; a WebAssembly instance is single-threaded.
 */
#ifndef MCPJSON_JSON_H
#define MCPJSON_JSON_H

#include <stddef.h>

#define JSON_MAX_DEPTH 64

/* arena: every allocation of one call, released at once. */
typedef struct arena_chunk arena_chunk;
typedef struct {
	arena_chunk *head;
	int oom;
} arena;

void *arena_alloc(arena *a, size_t n);
void arena_free(arena *a);

typedef enum { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_ARRAY, J_OBJECT } json_type;

typedef struct json_value json_value;
typedef struct {
	const char *s; /* UTF-8, NUL-terminated for convenience, len excludes the NUL */
	size_t len;
} json_str;

struct json_value {
	json_type type;
	int boolean;
	double number;
	json_str string;   /* J_STRING; for J_NUMBER, the number's text */
	size_t len;        /* items in an array, members in an object */
	json_value **items; /* array items, or object member values */
	json_str *keys;    /* object member keys */
};

/* json_parse parses data[0:len]. On error it returns NULL and writes a message to err. */
json_value *json_parse(arena *a, const char *data, size_t len, char *err, size_t errlen);

/* json_get returns the member key of object o, or NULL. */
json_value *json_get(const json_value *o, const char *key);

/* buffer: a growable output buffer; oom is set when growing fails. */
typedef struct {
	char *p;
	size_t len, cap;
	int oom;
} buffer;

void buf_bytes(buffer *b, const char *s, size_t n);
void buf_str(buffer *b, const char *s);
/* buf_json_string writes s[0:n] as a JSON string literal with every needed escape: '"', '\\',
 * control characters, DEL, U+2028 and U+2029. s must be valid UTF-8. */
void buf_json_string(buffer *b, const char *s, size_t n);
void buf_free(buffer *b);

#endif
