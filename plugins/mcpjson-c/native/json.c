//go:build cgo

/* The renderer's JSON reader and writer, compiled natively for package native. */
#include "../src/json.c"
