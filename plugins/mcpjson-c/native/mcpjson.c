//go:build cgo
// (The line above: package native compiles this file with cgo; a pure-Go build skips it.)
/*
 * mcpjson.c - the "mcpjson" renderer: a loadout plugin written in C11 against sdk/ABI.md.
 *
 * It renders the vetted MCP servers as one generic {"mcpServers": {...}} file (the .mcp.json
 * shape: stdio command/args/env, http type/url/headers, allowedTools for a restricted server)
 * at root "run", path "mcp.json", mode 0600, secret when any env or header pair is secret.
 * Skills are installed at root "config" under skills/<name>/, each SKILL.md in sdk/format's
 * canonical form, and the prompt names each server and its tools as the host writes them
 * (format.ServersPrompt). What that shape cannot say comes back as a warning,
 * never silently lost: unsupported transports, disabled servers, cwd, exposure, OAuth,
 * lifecycle and duplicate ids.
 *
 * Memory: loadout_alloc hands out malloc'd input buffers; the output of a call and everything a
 * call allocates live until the next call into the module. A WebAssembly instance runs one call
 * at a time, so the globals below need no lock.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define HARNESS "mcpjson"

/* The largest timeout rendered, in milliseconds (24 hours): the profile's timeoutMax. */
#define MAX_TIMEOUT_MS 86400000LL

static arena call_arena;
static buffer output;

#ifdef __wasm__
/* ---- the ABI's exports (a native build, for benchmarks, has mcpjson_render instead) ----- */

#define EXPORT(name) __attribute__((export_name(name)))

#define ABI_VERSION 1

static const char manifest_json[] =
	"{\"name\":\"render.mcpjson\",\"version\":\"1.0.0\",\"abiVersion\":1,\"harness\":\"" HARNESS "\","
	"\"transports\":[\"stdio\",\"http\"],\"nativeSkills\":true,\"roots\":[\"config\",\"run\"]}";

/* Input buffers handed out by loadout_alloc and not yet consumed by a render. */
#define MAX_INPUTS 16
static char *inputs[MAX_INPUTS];
static size_t input_sizes[MAX_INPUTS];
static size_t n_inputs;

static uint64_t pack(const char *p, size_t n) { return (uint64_t)(uintptr_t)p << 32 | (uint64_t)(uint32_t)n; }

EXPORT("loadout_abi_version") int32_t loadout_abi_version(void) { return ABI_VERSION; }

EXPORT("loadout_alloc") uint32_t loadout_alloc(uint32_t size) {
	if (n_inputs == MAX_INPUTS) {
		/* The host calls alloc once per render; a host that keeps allocating loses the oldest. */
		free(inputs[0]);
		memmove(inputs, inputs + 1, (MAX_INPUTS - 1) * sizeof inputs[0]);
		memmove(input_sizes, input_sizes + 1, (MAX_INPUTS - 1) * sizeof input_sizes[0]);
		n_inputs--;
	}
	char *p = malloc(size ? size : 1);
	if (p == NULL) {
		return 0;
	}
	inputs[n_inputs] = p;
	input_sizes[n_inputs] = size;
	n_inputs++;
	return (uint32_t)(uintptr_t)p;
}

EXPORT("loadout_manifest") uint64_t loadout_manifest(void) { return pack(manifest_json, sizeof manifest_json - 1); }
#endif

/* ---- request access with type checks ---------------------------------------------------- */

typedef struct {
	char msg[256];
	const char *code; /* NULL while no error */
} failure;

static int failf(failure *f, const char *code, const char *what, const char *problem) {
	if (f->code == NULL) {
		f->code = code;
		snprintf(f->msg, sizeof f->msg, "%s: %s", what, problem);
	}
	return 0;
}

/* keys_known fails unless every key of o is in allowed (a NULL-terminated list). */
static int keys_known(failure *f, const json_value *o, const char *what, const char *const *allowed) {
	for (size_t i = 0; i < o->len; i++) {
		int known = 0;
		for (const char *const *a = allowed; *a != NULL && !known; a++) {
			known = strlen(*a) == o->keys[i].len && memcmp(*a, o->keys[i].s, o->keys[i].len) == 0;
		}
		if (!known) {
			return failf(f, "invalid_input", what, "unknown field");
		}
	}
	return 1;
}

/* object returns o if it is an object, NULL for null or absent, and fails on any other type. */
static const json_value *want(failure *f, const json_value *v, json_type t, const char *what) {
	if (v == NULL || v->type == J_NULL) {
		return NULL;
	}
	if (v->type != t) {
		failf(f, "invalid_input", what, "wrong type");
		return NULL;
	}
	return v;
}

static json_str get_str(failure *f, const json_value *o, const char *key) {
	json_str empty = {"", 0};
	const json_value *v = want(f, json_get(o, key), J_STRING, key);
	return v ? v->string : empty;
}

static int get_bool(failure *f, const json_value *o, const char *key) {
	const json_value *v = want(f, json_get(o, key), J_BOOL, key);
	return v ? v->boolean : 0;
}

static double get_number(failure *f, const json_value *o, const char *key) {
	const json_value *v = want(f, json_get(o, key), J_NUMBER, key);
	return v ? v->number : 0;
}

static int str_is(json_str s, const char *lit) { return s.len == strlen(lit) && memcmp(s.s, lit, s.len) == 0; }

static int str_eq(json_str a, json_str b) { return a.len == b.len && memcmp(a.s, b.s, a.len) == 0; }

static const char *const request_keys[] = {"abiVersion", "harness", "run", "servers", "skills", NULL};
static const char *const run_keys[] = {"ambientAuth", "user", NULL};
static const char *const server_keys[] = {"id", "transport", "command", "args", "env", "hostEnv", "cwd", "url", "headers",
	"toolsRestricted", "allowedTools", "description", "enabled", "timeout", "exposure", "toolExposure", "oauth",
	"lifecycle", "idleTimeout", NULL};
static const char *const oauth_keys[] = {"clientId", "callbackPort", "scopes", "authServerMetadataUrl", NULL};
static const char *const pair_keys[] = {"name", "value", "secret", NULL};
static const char *const skill_keys[] = {"name", "description", "instructions", "resources", NULL};
static const char *const resource_keys[] = {"path", "content", NULL};

/* check_pairs checks an array of Pair objects; it returns the array or NULL. */
static const json_value *check_pairs(failure *f, const json_value *s, const char *key) {
	const json_value *a = want(f, json_get(s, key), J_ARRAY, key);
	for (size_t i = 0; a != NULL && i < a->len; i++) {
		const json_value *p = a->items[i];
		if (p->type != J_OBJECT) {
			failf(f, "invalid_input", key, "want an object");
			return NULL;
		}
		keys_known(f, p, key, pair_keys);
		const json_value *name = json_get(p, "name");
		if (name == NULL || name->type != J_STRING) {
			failf(f, "invalid_input", key, "want a name");
			return NULL;
		}
		get_str(f, p, "value");
		get_bool(f, p, "secret");
	}
	return a;
}

static void check_strings(failure *f, const json_value *s, const char *key) {
	const json_value *a = want(f, json_get(s, key), J_ARRAY, key);
	for (size_t i = 0; a != NULL && i < a->len; i++) {
		if (a->items[i]->type != J_STRING) {
			failf(f, "invalid_input", key, "want strings");
		}
	}
}

/* check_request walks the whole request once so that rendering can trust its shape. */
static void check_request(failure *f, const json_value *req) {
	if (req->type != J_OBJECT) {
		failf(f, "invalid_input", "request", "want an object");
		return;
	}
	keys_known(f, req, "request", request_keys);
	const json_value *v = want(f, json_get(req, "abiVersion"), J_NUMBER, "abiVersion");
	if (f->code == NULL && (v == NULL || strcmp(v->string.s, "1") != 0)) {
		failf(f, "invalid_input", "abiVersion", "this plugin speaks ABI version 1");
	}
	if (f->code == NULL && !str_is(get_str(f, req, "harness"), HARNESS)) {
		failf(f, "unsupported", "harness", "this plugin renders harness \"" HARNESS "\"");
	}
	const json_value *run = want(f, json_get(req, "run"), J_OBJECT, "run");
	if (run != NULL) {
		keys_known(f, run, "run", run_keys);
		get_bool(f, run, "ambientAuth");
		get_str(f, run, "user");
	}
	const json_value *servers = want(f, json_get(req, "servers"), J_ARRAY, "servers");
	for (size_t i = 0; servers != NULL && i < servers->len; i++) {
		const json_value *s = want(f, servers->items[i], J_OBJECT, "server");
		if (s == NULL) {
			failf(f, "invalid_input", "server", "want an object");
			continue;
		}
		keys_known(f, s, "server", server_keys);
		static const char *const strs[] = {"id", "transport", "command", "cwd", "url", "description", "exposure"};
		for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++) {
			get_str(f, s, strs[k]);
		}
		check_strings(f, s, "args");
		check_strings(f, s, "allowedTools");
		check_pairs(f, s, "env");
		check_pairs(f, s, "hostEnv");
		check_pairs(f, s, "headers");
		check_pairs(f, s, "toolExposure");
		get_bool(f, s, "toolsRestricted");
		get_bool(f, s, "enabled");
		if (get_number(f, s, "timeout") < 0) {
			failf(f, "invalid_input", "timeout", "negative");
		}
		const json_value *oauth = want(f, json_get(s, "oauth"), J_OBJECT, "oauth");
		if (oauth != NULL) {
			keys_known(f, oauth, "oauth", oauth_keys);
			get_str(f, oauth, "clientId");
			get_number(f, oauth, "callbackPort");
			check_strings(f, oauth, "scopes");
			get_str(f, oauth, "authServerMetadataUrl");
		}
		get_str(f, s, "lifecycle");
		get_number(f, s, "idleTimeout");
	}
	const json_value *skills = want(f, json_get(req, "skills"), J_ARRAY, "skills");
	for (size_t i = 0; skills != NULL && i < skills->len; i++) {
		const json_value *sk = want(f, skills->items[i], J_OBJECT, "skill");
		if (sk == NULL) {
			failf(f, "invalid_input", "skill", "want an object");
			continue;
		}
		keys_known(f, sk, "skill", skill_keys);
		get_str(f, sk, "name");
		get_str(f, sk, "description");
		get_str(f, sk, "instructions");
		const json_value *res = want(f, json_get(sk, "resources"), J_ARRAY, "resources");
		for (size_t r = 0; res != NULL && r < res->len; r++) {
			const json_value *o = want(f, res->items[r], J_OBJECT, "resource");
			if (o == NULL) {
				failf(f, "invalid_input", "resource", "want an object");
				continue;
			}
			keys_known(f, o, "resource", resource_keys);
			get_str(f, o, "path");
			get_str(f, o, "content");
		}
	}
}

/* ---- rendering ---------------------------------------------------------------------------- */

typedef struct {
	buffer file;     /* mcp.json */
	buffer files;    /* the skill files: members of the files array, each after a comma */
	buffer warnings; /* the JSON array members, comma-separated */
	buffer prompt;   /* raw prompt text */
	int secret;
	int rendered; /* servers written to mcpServers */
} render_state;

static void warn(render_state *st, const char *code, json_str server, json_str skill, const char *msg_a, json_str msg_b, const char *msg_c) {
	buffer *w = &st->warnings;
	if (w->len) {
		buf_str(w, ",");
	}
	buf_str(w, "{\"code\":");
	buf_json_string(w, code, strlen(code));
	/* The message is built in its own buffer so that each part is escaped once. */
	buffer m = {0};
	buf_str(&m, msg_a);
	buf_bytes(&m, msg_b.s, msg_b.len);
	buf_str(&m, msg_c);
	buf_str(w, ",\"message\":");
	buf_json_string(w, m.oom ? "" : m.p, m.oom ? 0 : m.len);
	if (m.oom) {
		w->oom = 1;
	}
	buf_free(&m);
	if (server.len) {
		buf_str(w, ",\"server\":");
		buf_json_string(w, server.s, server.len);
	}
	if (skill.len) {
		buf_str(w, ",\"skill\":");
		buf_json_string(w, skill.s, skill.len);
	}
	buf_str(w, "}");
}

/* write_pairs writes an array of Pair as a JSON object. A name that appears again later in
 * the list (after the pairs in first, when given) is skipped, so the last value wins, as in a
 * spawn environment, and the object never holds a duplicate key. */
static void write_pairs(render_state *st, const char *indent, const json_value *first, const json_value *pairs, int *wrote) {
	buffer *b = &st->file;
	const json_value *lists[2] = {first, pairs};
	for (int l = 0; l < 2; l++) {
		for (size_t i = 0; lists[l] != NULL && i < lists[l]->len; i++) {
			const json_value *p = lists[l]->items[i];
			json_str name = json_get(p, "name")->string;
			int later = 0;
			for (int m = l; m < 2 && !later; m++) {
				for (size_t j = (m == l ? i + 1 : 0); lists[m] != NULL && j < lists[m]->len && !later; j++) {
					later = str_eq(json_get(lists[m]->items[j], "name")->string, name);
				}
			}
			if (later) {
				continue;
			}
			const json_value *secret = json_get(p, "secret");
			if (secret != NULL && secret->type == J_BOOL && secret->boolean) {
				st->secret = 1;
			}
			const json_value *value = json_get(p, "value");
			buf_str(b, *wrote ? ",\n" : "\n");
			buf_str(b, indent);
			buf_json_string(b, name.s, name.len);
			buf_str(b, ": ");
			if (value != NULL && value->type == J_STRING) {
				buf_json_string(b, value->string.s, value->string.len);
			} else {
				buf_str(b, "\"\"");
			}
			*wrote = 1;
		}
	}
}

static const json_value *pairs_of(const json_value *s, const char *key) {
	const json_value *v = json_get(s, key);
	return (v != NULL && v->type == J_ARRAY && v->len) ? v : NULL;
}

static void render_server(render_state *st, const json_value *s, const json_value *servers, size_t index) {
	json_str none = {"", 0};
	failure ignore = {0};
	json_str id = get_str(&ignore, s, "id");
	json_str transport = get_str(&ignore, s, "transport");
	for (size_t j = 0; j < index; j++) {
		if (str_eq(get_str(&ignore, servers->items[j], "id"), id)) {
			warn(st, "duplicate_server", id, none, "server \"", id, "\" appears twice; the first one is rendered");
			return;
		}
	}
	int stdio = str_is(transport, "stdio");
	if (!stdio && !str_is(transport, "http")) {
		warn(st, "transport_unsupported", id, none, "transport \"", transport, "\" is not rendered");
		return;
	}
	if (!get_bool(&ignore, s, "enabled")) {
		warn(st, "server_disabled", id, none, "server \"", id, "\" is disabled and not rendered");
		return;
	}
	buffer *b = &st->file;
	buf_str(b, st->rendered ? ",\n    " : "\n    ");
	st->rendered++;
	buf_json_string(b, id.s, id.len);
	buf_str(b, ": {\n      \"type\": ");
	buf_str(b, stdio ? "\"stdio\"" : "\"http\"");
	if (stdio) {
		json_str command = get_str(&ignore, s, "command");
		buf_str(b, ",\n      \"command\": ");
		buf_json_string(b, command.s, command.len);
		const json_value *args = json_get(s, "args");
		buf_str(b, ",\n      \"args\": [");
		for (size_t i = 0; args != NULL && args->type == J_ARRAY && i < args->len; i++) {
			buf_str(b, i ? ", " : "");
			buf_json_string(b, args->items[i]->string.s, args->items[i]->string.len);
		}
		buf_str(b, "]");
		const json_value *host_env = pairs_of(s, "hostEnv"), *env = pairs_of(s, "env");
		if (host_env != NULL || env != NULL) {
			int wrote = 0;
			buf_str(b, ",\n      \"env\": {");
			write_pairs(st, "        ", host_env, env, &wrote);
			buf_str(b, "\n      }");
		}
		json_str cwd = get_str(&ignore, s, "cwd");
		if (cwd.len) {
			warn(st, "cwd_unsupported", id, none, "the mcp.json format has no working directory; \"", cwd, "\" is not applied");
		}
	} else {
		json_str url = get_str(&ignore, s, "url");
		buf_str(b, ",\n      \"url\": ");
		buf_json_string(b, url.s, url.len);
		const json_value *headers = pairs_of(s, "headers");
		if (headers != NULL) {
			int wrote = 0;
			buf_str(b, ",\n      \"headers\": {");
			write_pairs(st, "        ", NULL, headers, &wrote);
			buf_str(b, "\n      }");
		}
	}
	if (get_bool(&ignore, s, "toolsRestricted")) {
		/* The allow list its profile reads (allowedTools), even empty: a restricted server never
		 * goes out without it. */
		const json_value *tools = json_get(s, "allowedTools");
		buf_str(b, ",\n      \"allowedTools\": [");
		for (size_t i = 0; tools != NULL && tools->type == J_ARRAY && i < tools->len; i++) {
			buf_str(b, i ? ", " : "");
			buf_json_string(b, tools->items[i]->string.s, tools->items[i]->string.len);
		}
		buf_str(b, "]");
	}
	double timeout = get_number(&ignore, s, "timeout");
	if (timeout > 0) {
		/* Milliseconds rounded, at least 1; above MAX_TIMEOUT_MS (the profile's timeoutMax) the
		 * bound, with a timeout_adjusted warning. */
		long long ms = timeout * 1000 > MAX_TIMEOUT_MS ? MAX_TIMEOUT_MS : (long long)(timeout * 1000 + 0.5);
		if (ms < 1) {
			ms = 1;
		}
		char text[32];
		snprintf(text, sizeof text, "%lld", ms);
		buf_str(b, ",\n      \"timeout\": ");
		buf_str(b, text);
		if (timeout * 1000 > MAX_TIMEOUT_MS) {
			warn(st, "timeout_adjusted", id, none, "the timeout of server \"", id, "\" exceeds 24 hours; rendered as 86400000 ms");
		}
	}
	buf_str(b, "\n    }");

	if (json_get(s, "oauth") != NULL && json_get(s, "oauth")->type == J_OBJECT) {
		warn(st, "oauth_unsupported", id, none, "the mcp.json format has no OAuth setting; server \"", id, "\" is rendered without it");
	}
	if (get_str(&ignore, s, "lifecycle").len || get_number(&ignore, s, "idleTimeout") != 0) {
		warn(st, "lifecycle_unsupported", id, none, "the mcp.json format has no lifecycle setting; server \"", id, "\" is started its own way");
	}
	json_str exposure = get_str(&ignore, s, "exposure");
	if (exposure.len || pairs_of(s, "toolExposure") != NULL) {
		warn(st, "exposure_unsupported", id, none, "the mcp.json format has no tool exposure; server \"", id, "\" is exposed directly");
	}
	/* The prompt's line for the server, as the host writes it (format.ServersPrompt). */
	buf_str(&st->prompt, "- ");
	buf_bytes(&st->prompt, id.s, id.len);
	if (!get_bool(&ignore, s, "toolsRestricted")) {
		buf_str(&st->prompt, ": all tools\n");
		return;
	}
	const json_value *tools = json_get(s, "allowedTools");
	size_t n = (tools != NULL && tools->type == J_ARRAY) ? tools->len : 0;
	buf_str(&st->prompt, n ? ": only " : ": no tools");
	for (size_t i = 0; i < n; i++) {
		buf_str(&st->prompt, i ? ", " : "");
		buf_bytes(&st->prompt, tools->items[i]->string.s, tools->items[i]->string.len);
	}
	buf_str(&st->prompt, "\n");
}

/* ---- skills: sdk/format's canonical SKILL.md (SkillNames, SkillDescription, SkillMarkdown) --
 * The host compares every SKILL.md byte for byte with the canonical rendering of the vetted
 * name, description and instructions, so this is the Go SDK's rule, spelled in C. */

#define MAX_SKILL_NAME 64
#define MAX_SKILL_DESCRIPTION 1024

typedef struct {
	char s[MAX_SKILL_NAME + 1];
} skill_dir;

/* is_skill_name: ^[a-z0-9]+(-[a-z0-9]+)*$, at most MAX_SKILL_NAME bytes. */
static int is_skill_name(const char *n, size_t len) {
	if (len == 0 || len > MAX_SKILL_NAME || n[0] == '-' || n[len - 1] == '-') {
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		char c = n[i];
		if (c == '-' ? n[i - 1] == '-' : !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			return 0;
		}
	}
	return 1;
}

static void trim_dashes(skill_dir *d) {
	size_t n = strlen(d->s);
	while (n > 0 && d->s[n - 1] == '-') {
		d->s[--n] = 0;
	}
}

/* skill_name: ASCII letters lowercased, every run of other bytes one "-", edge hyphens trimmed,
 * cut to MAX_SKILL_NAME, "skill" when nothing is left. */
static skill_dir skill_name(json_str n) {
	skill_dir d = {{0}};
	if (is_skill_name(n.s, n.len)) {
		memcpy(d.s, n.s, n.len);
		return d;
	}
	char tmp[2 * MAX_SKILL_NAME + 2];
	size_t len = 0;
	int dash = 0;
	for (size_t i = 0; i < n.len && len <= MAX_SKILL_NAME; i++) {
		char c = n.s[i];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c + ('a' - 'A'));
		}
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (dash && len > 0) {
				tmp[len++] = '-';
			}
			dash = 0;
			tmp[len++] = c;
			continue;
		}
		dash = 1;
	}
	if (len > MAX_SKILL_NAME) {
		len = MAX_SKILL_NAME;
	}
	memcpy(d.s, tmp, len);
	trim_dashes(&d);
	if (d.s[0] == 0) {
		strcpy(d.s, "skill");
	}
	return d;
}

static int dir_taken(const skill_dir *dirs, size_t n, const char *s) {
	for (size_t i = 0; i < n; i++) {
		if (strcmp(dirs[i].s, s) == 0) {
			return 1;
		}
	}
	return 0;
}

/* skill_dirs: a conforming name keeps it (first come); every other gets skill_name, then the
 * first free suffix "-2", "-3", ... with the stem cut to fit. */
static void skill_dirs(const json_value *skills, skill_dir *dirs) {
	failure ignore = {0};
	size_t n = skills->len;
	memset(dirs, 0, n * sizeof *dirs);
	for (size_t i = 0; i < n; i++) {
		json_str name = get_str(&ignore, skills->items[i], "name");
		if (is_skill_name(name.s, name.len)) {
			char tmp[MAX_SKILL_NAME + 1] = {0};
			memcpy(tmp, name.s, name.len);
			if (!dir_taken(dirs, n, tmp)) {
				strcpy(dirs[i].s, tmp);
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (dirs[i].s[0] != 0) {
			continue;
		}
		skill_dir base = skill_name(get_str(&ignore, skills->items[i], "name")), d = base;
		for (int k = 2; dir_taken(dirs, n, d.s); k++) {
			char suffix[16];
			int sl = snprintf(suffix, sizeof suffix, "-%d", k);
			d = base;
			if (strlen(d.s) + (size_t)sl > MAX_SKILL_NAME) {
				d.s[MAX_SKILL_NAME - sl] = 0;
				trim_dashes(&d);
			}
			strcat(d.s, suffix);
		}
		dirs[i] = d;
	}
}

/* utf8_rune decodes the rune at s[i] (the request is valid UTF-8) and its size. */
static unsigned utf8_rune(const unsigned char *s, size_t n, size_t i, size_t *size) {
	unsigned c = s[i];
	if (c < 0x80 || i + 1 >= n) {
		*size = 1;
		return c;
	}
	if (c < 0xE0) {
		*size = 2;
		return (c & 0x1f) << 6 | (s[i + 1] & 0x3f);
	}
	if (c < 0xF0 || i + 3 >= n) {
		*size = 3;
		return (c & 0x0f) << 12 | (s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f);
	}
	*size = 4;
	return (c & 0x07) << 18 | (s[i + 1] & 0x3f) << 12 | (s[i + 2] & 0x3f) << 6 | (s[i + 3] & 0x3f);
}

/* is_space is Go's unicode.IsSpace for the runes left once controls are spaces. */
static int is_space(unsigned r) {
	return r == ' ' || r == 0xa0 || r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 ||
	       r == 0x202f || r == 0x205f || r == 0x3000 || (r >= 0x09 && r <= 0x0d) || r == 0x85;
}

/* skill_description writes desc as one line (format.SkillDescription): every control and
 * U+2028, U+2029 a space, at most MAX_SKILL_DESCRIPTION runes, surrounding spaces trimmed. It
 * returns 1 when the result differs from desc. */
static int skill_description(buffer *out, json_str desc) {
	const unsigned char *u = (const unsigned char *)desc.s;
	buffer b = {0};
	size_t runes = 0;
	for (size_t i = 0, size = 0; i < desc.len && runes < MAX_SKILL_DESCRIPTION; i += size, runes++) {
		unsigned r = utf8_rune(u, desc.len, i, &size);
		if (r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029) {
			buf_str(&b, " ");
		} else {
			buf_bytes(&b, desc.s + i, size);
		}
	}
	/* Trim: leading runes, then trailing ones (a UTF-8 rune starts at a byte not 10xxxxxx). */
	size_t start = 0, end = b.len, size = 0;
	const unsigned char *bu = (const unsigned char *)(b.p ? b.p : "");
	while (start < end && is_space(utf8_rune(bu, end, start, &size))) {
		start += size;
	}
	while (end > start) {
		size_t k = end - 1;
		while (k > start && (bu[k] & 0xc0) == 0x80) {
			k--;
		}
		if (!is_space(utf8_rune(bu, end, k, &size))) {
			break;
		}
		end = k;
	}
	buf_bytes(out, b.p ? b.p + start : "", end - start);
	int changed = b.oom || end - start != desc.len || memcmp(b.p ? b.p + start : "", desc.s, desc.len) != 0;
	if (b.oom) {
		out->oom = 1;
	}
	buf_free(&b);
	return changed;
}

/* yaml_value writes v as format.FrontMatter does: plain when it is ^[a-z][a-z0-9-]*$ and no
 * YAML keyword, else a double-quoted scalar (format.AppendYAMLString). */
static void yaml_value(buffer *b, const char *v, size_t n) {
	static const char *const keywords[] = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", NULL};
	int plain = n > 0 && v[0] >= 'a' && v[0] <= 'z';
	for (size_t i = 0; plain && i < n; i++) {
		plain = (v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '-';
	}
	for (const char *const *k = keywords; plain && *k != NULL; k++) {
		plain = !(strlen(*k) == n && memcmp(*k, v, n) == 0);
	}
	if (plain) {
		buf_bytes(b, v, n);
		return;
	}
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)v;
	buf_str(b, "\"");
	for (size_t i = 0, size = 0; i < n; i += size) {
		unsigned r = utf8_rune(u, n, i, &size);
		if (r == '"' || r == '\\') {
			char esc[2] = {'\\', (char)r};
			buf_bytes(b, esc, 2);
		} else if (r == '\t') {
			buf_str(b, "\\t");
		} else if (r == '\n') {
			buf_str(b, "\\n");
		} else if (r == '\r') {
			buf_str(b, "\\r");
		} else if (r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == 0xfeff ||
		           r == 0xfffe || r == 0xffff) {
			char esc[6] = {'\\', 'u', hex[r >> 12 & 0xf], hex[r >> 8 & 0xf], hex[r >> 4 & 0xf], hex[r & 0xf]};
			buf_bytes(b, esc, 6);
		} else {
			buf_bytes(b, v + i, size);
		}
	}
	buf_str(b, "\"");
}

static int has_secret(json_str s) {
	static const char p[] = "{{loadout.secret.";
	for (size_t i = 0; i + sizeof p - 1 <= s.len; i++) {
		if (memcmp(s.s + i, p, sizeof p - 1) == 0) {
			return 1;
		}
	}
	return 0;
}

/* skill_file adds one file of the plan: a member of the files array. */
static void skill_file(buffer *files, const char *dir, json_str rel, const char *format, const char *content, size_t n) {
	buf_str(files, ",{\"root\":\"config\",\"path\":");
	buffer path = {0};
	buf_str(&path, "skills/");
	buf_str(&path, dir);
	buf_str(&path, "/");
	buf_bytes(&path, rel.s, rel.len);
	buf_json_string(files, path.oom ? "" : path.p, path.oom ? 0 : path.len);
	if (path.oom) {
		files->oom = 1;
	}
	buf_free(&path);
	buf_str(files, ",\"mode\":\"0644\",\"format\":\"");
	buf_str(files, format);
	buf_str(files, "\",\"content\":");
	buf_json_string(files, content, n);
	buf_str(files, ",\"secret\":false}");
}

/* render_skills installs every skill under the config root at skills/<name>/: the canonical
 * SKILL.md and the resources, with a warning for each renamed skill and each description that
 * was generated or changed. It returns 0 (and fails f) when a skill holds a secret placeholder:
 * skill files and text may go where no secret may. */
static int render_skills(render_state *st, const json_value *skills, failure *f) {
	json_str none = {"", 0};
	failure ignore = {0};
	if (skills == NULL || skills->type != J_ARRAY || skills->len == 0) {
		return 1;
	}
	for (size_t i = 0; i < skills->len; i++) {
		const json_value *sk = skills->items[i];
		int secret = has_secret(get_str(&ignore, sk, "name")) || has_secret(get_str(&ignore, sk, "description")) ||
		             has_secret(get_str(&ignore, sk, "instructions"));
		const json_value *res = json_get(sk, "resources");
		for (size_t r = 0; !secret && res != NULL && res->type == J_ARRAY && r < res->len; r++) {
			secret = has_secret(get_str(&ignore, res->items[r], "path")) || has_secret(get_str(&ignore, res->items[r], "content"));
		}
		if (secret) {
			return failf(f, "invalid_input", "skill", "holds a secret placeholder");
		}
	}
	skill_dir *dirs = arena_alloc(&call_arena, skills->len * sizeof *dirs);
	if (dirs == NULL) {
		st->files.oom = 1;
		return 1;
	}
	skill_dirs(skills, dirs);
	for (size_t i = 0; i < skills->len; i++) {
		const json_value *sk = skills->items[i];
		json_str name = get_str(&ignore, sk, "name");
		json_str dir = {dirs[i].s, strlen(dirs[i].s)};
		if (!str_eq(dir, name)) {
			warn(st, "skill_renamed", none, name, "skill name does not satisfy the portable skill-name rule; rendered as \"", dir, "\"");
		}
		buffer desc = {0};
		int changed = skill_description(&desc, get_str(&ignore, sk, "description"));
		if (desc.len == 0) {
			buf_str(&desc, "Instructions for ");
			buf_str(&desc, dir.s);
			buf_str(&desc, ". Use when a task calls for the ");
			buf_str(&desc, dir.s);
			buf_str(&desc, " skill.");
			warn(st, "skill_description_generated", none, name, "skill has no description, which harnesses skip; a generated one is rendered", none, "");
		} else if (changed) {
			warn(st, "skill_description_changed", none, name, "skill description was made one line of at most 1024 characters", none, "");
		}
		json_str instructions = get_str(&ignore, sk, "instructions");
		buffer md = {0};
		buf_str(&md, "---\nname: ");
		yaml_value(&md, dir.s, dir.len);
		buf_str(&md, "\ndescription: ");
		yaml_value(&md, desc.p ? desc.p : "", desc.len);
		buf_str(&md, "\n---\n");
		buf_bytes(&md, instructions.s, instructions.len);
		json_str skill_md = {"SKILL.md", 8};
		skill_file(&st->files, dir.s, skill_md, "markdown", md.p ? md.p : "", md.len);
		if (md.oom || desc.oom) {
			st->files.oom = 1;
		}
		buf_free(&md);
		buf_free(&desc);
		const json_value *res = json_get(sk, "resources");
		for (size_t r = 0; res != NULL && res->type == J_ARRAY && r < res->len; r++) {
			json_str content = get_str(&ignore, res->items[r], "content");
			skill_file(&st->files, dir.s, get_str(&ignore, res->items[r], "path"), "text", content.s, content.len);
		}
	}
	return 1;
}

/* render renders req into st; it fails f when the request cannot be rendered. */
static void render(render_state *st, const json_value *req, failure *f) {
	buf_str(&st->file, "{\n  \"mcpServers\": {");
	const json_value *servers = json_get(req, "servers");
	for (size_t i = 0; servers != NULL && servers->type == J_ARRAY && i < servers->len; i++) {
		render_server(st, servers->items[i], servers, i);
	}
	buf_str(&st->file, st->rendered ? "\n  }\n}\n" : "}\n}\n");
	render_skills(st, json_get(req, "skills"), f);
}

static void write_plan(buffer *out, render_state *st) {
	buf_str(out, "{\"files\":[{\"root\":\"run\",\"path\":\"mcp.json\",\"mode\":\"0600\",\"format\":\"json\",\"content\":");
	buf_json_string(out, st->file.p, st->file.len);
	buf_str(out, st->secret ? ",\"secret\":true}" : ",\"secret\":false}");
	buf_bytes(out, st->files.len ? st->files.p : "", st->files.len);
	buf_str(out, "]");
	buf_str(out, ",\"args\":[],\"env\":[],\"prompt\":");
	buffer prompt = {0};
	if (st->prompt.len) {
		buf_str(&prompt, "## MCP servers\n\nThese MCP servers are configured for this run, each with the tools you may use:\n");
		buf_bytes(&prompt, st->prompt.p, st->prompt.len);
	}
	buf_json_string(out, prompt.len ? prompt.p : "", prompt.len);
	if (prompt.oom) {
		out->oom = 1;
	}
	buf_free(&prompt);
	buf_str(out, ",\"gitExclude\":[],\"warnings\":[");
	buf_bytes(out, st->warnings.len ? st->warnings.p : "", st->warnings.len);
	buf_str(out, "]}");
}

static void write_error(buffer *out, const char *code, const char *msg) {
	out->len = 0;
	out->oom = 0;
	buf_str(out, "{\"error\":{\"code\":");
	buf_json_string(out, code, strlen(code));
	buf_str(out, ",\"message\":");
	buf_json_string(out, msg, strlen(msg));
	buf_str(out, "}}");
}

/* output_result returns output, or a fixed error document when writing it ran out of memory. */
static const char *output_result(size_t *n) {
	if (output.oom) {
		static const char oom[] = "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
		*n = sizeof oom - 1;
		return oom;
	}
	*n = output.len;
	return output.p;
}

/*
 * render_call renders the request in [in, in+len) into output and returns the plan (or the
 * ABI error document) in *n bytes; the result lives until the next call. It is the whole render
 * apart from the ABI's buffer handling, so a native build runs the same code.
 */
static const char *render_call(const char *in, size_t len, size_t *n) {
	arena_free(&call_arena);
	buf_free(&output);
	char err[256];
	json_value *req = json_parse(&call_arena, in, len, err, sizeof err);
	failure f = {0};
	if (req == NULL) {
		write_error(&output, call_arena.oom ? "internal" : "invalid_input", err);
	} else if (check_request(&f, req), f.code != NULL) {
		write_error(&output, f.code, f.msg);
	} else {
		render_state st = {0};
		render(&st, req, &f);
		if (f.code != NULL) {
			write_error(&output, f.code, f.msg);
		} else {
			write_plan(&output, &st);
			if (st.file.oom || st.files.oom || st.warnings.oom || st.prompt.oom || output.oom) {
				write_error(&output, "internal", "out of memory");
			}
		}
		buf_free(&st.file);
		buf_free(&st.files);
		buf_free(&st.warnings);
		buf_free(&st.prompt);
	}
	arena_free(&call_arena);
	return output_result(n);
}

#ifdef __wasm__
/* input_range returns the input buffer that holds [ptr, ptr+len), or -1. */
static int input_range(uint32_t ptr, uint32_t len) {
	for (size_t i = 0; i < n_inputs; i++) {
		uintptr_t start = (uintptr_t)inputs[i];
		if ((uintptr_t)ptr >= start && (uint64_t)ptr + len <= (uint64_t)start + input_sizes[i]) {
			return (int)i;
		}
	}
	return -1;
}

EXPORT("loadout_render") uint64_t loadout_render(uint32_t ptr, uint32_t len) {
	const char *plan;
	size_t n;
	if (input_range(ptr, len) < 0) {
		buf_free(&output);
		write_error(&output, "invalid_input", "request is not inside a buffer returned by loadout_alloc");
		plan = output_result(&n);
	} else {
		plan = render_call((const char *)(uintptr_t)ptr, len, &n);
	}
	for (size_t i = 0; i < n_inputs; i++) {
		free(inputs[i]);
	}
	n_inputs = 0;
	return pack(plan, n);
}
#else
/*
 * mcpjson_render is the renderer built natively, for benchmarks that compare it with the
 * WebAssembly build: the same code as loadout_render without the ABI's buffers. It returns the
 * plan (or the ABI error document) in *n bytes, valid until the next call; not safe for
 * concurrent use.
 */
const char *mcpjson_render(const char *in, size_t len, size_t *n) { return render_call(in, len, n); }
#endif
