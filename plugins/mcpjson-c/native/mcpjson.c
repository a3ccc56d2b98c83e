//go:build cgo

/* The renderer's source, compiled natively for package native. */
#include "../src/mcpjson.c"
