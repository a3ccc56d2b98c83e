package spec

// Codes of a whole-request refusal (RejectError.Code). They are stable: callers, the result
// JSON and the conformity runner compare them.
const (
	// CodeInvalidJSON: the body is not JSON (syntax error, unterminated value, an escaped
	// unpaired UTF-16 surrogate).
	CodeInvalidJSON = "invalid_json"
	// CodeInvalidUTF8: the body is not valid UTF-8.
	CodeInvalidUTF8 = "invalid_utf8"
	// CodeDuplicateMember: a member name appears twice in one object (compared after unescaping).
	CodeDuplicateMember = "duplicate_member"
	// CodeFoldedMember: a member of the request, run, a skill, a resource or a server is not a
	// field name but case- or Unicode-folds to one (R11).
	CodeFoldedMember = "folded_member"
	// CodeTrailingData: something follows the top-level value.
	CodeTrailingData = "trailing_data"
	// CodeNotObject: the top-level value is not an object.
	CodeNotObject = "not_object"
	// CodeReservedPlaceholder: a string or member name contains abi.PlaceholderPrefix.
	CodeReservedPlaceholder = "reserved_placeholder"
	// CodeTooLarge: the body is larger than MaxRequestBytes.
	CodeTooLarge = "too_large"
	// CodeTooDeep: values are nested deeper than MaxDepth.
	CodeTooDeep = "too_deep"

	// CodeInvalidToken: a server's token member is not {"mint": bool, "ttl": duration}: not
	// an object, a member of the wrong type, an unknown member, or a ttl that is not a positive
	// Go duration (or is longer than the minter allows). A server asking for a credential is
	// never rendered without it, so the whole request is refused.
	CodeInvalidToken = "invalid_token"
	// CodeInvalidRunID: a server asks for a run token and run.id is missing or not a run id
	// (host/tokens.ValidRunID).
	CodeInvalidRunID = "invalid_run_id"
	// CodeMintUnsupported: a server asks for a run token and the command has no token store
	// to mint it into: only loadout serve mints (loadout render, policy eval and redact refuse).
	CodeMintUnsupported = "mint_unsupported"
	// CodeTokenConflict: a server asks for a run token and the request's tokens map already
	// holds one for its id; which credential to render would be a guess.
	CodeTokenConflict = "token_conflict"
	// CodeUserServerToken: a user server (userServers) has a token member: loadout mints run
	// tokens for catalog servers only.
	CodeUserServerToken = "user_server_token"
	// CodeInvalidGroups: run.groups is not null nor an array of distinct non-empty strings.
	// The policy may grant access by group, so a malformed list is never half read.
	CodeInvalidGroups = "invalid_groups"
	// CodeRunRevoked: a server asks for a run token for a run whose tokens were revoked.
	CodeRunRevoked = "run_revoked"
	// CodeInvalidBuiltinTools: run.builtinTools is not a list of distinct tool names
	// (BuiltinToolPattern). It pre-approves the harness's own tools, so a bad value refuses the
	// request rather than granting a guess.
	CodeInvalidBuiltinTools = "invalid_builtin_tools"
)

// Codes of a Diagnostic: one dropped or changed entry. They are stable snake_case strings.
const (
	// CodeUnknownField: a skill, resource or server has a member that is not a field (and
	// does not fold to one): the entry is dropped, since a misspelt field that narrows access
	// must not be read as absent. As a RejectError code: a member of the request or of run is
	// not a field, or such a drop left nothing to render.
	CodeUnknownField = "unknown_field"
	// CodeWrongType: a field had the wrong JSON type; it was ignored or counts as empty.
	CodeWrongType = "wrong_type"
	// CodeNotAnObject: an entry of skills, resources or mcpServers is not an object; ignored.
	CodeNotAnObject = "not_an_object"
	// CodeNonStringEntry: a non-string entry or value of a string list or map was removed.
	CodeNonStringEntry = "non_string_entry"

	// CodeMissingInstructions: a skill without non-empty string instructions was dropped.
	CodeMissingInstructions = "missing_instructions"
	// CodeNameChanged: a skill name was sanitized to a different name.
	CodeNameChanged = "name_changed"
	// CodeNameFallback: a skill name had nothing usable left and became FallbackSkillName.
	CodeNameFallback = "name_fallback"
	// CodeDuplicateName: a skill whose sanitized name case-insensitively equals an earlier
	// kept skill's was dropped (first wins).
	CodeDuplicateName = "duplicate_name"
	// CodeDescriptionChanged: a description was flattened to one line or cut to
	// MaxDescriptionChars characters.
	CodeDescriptionChanged = "description_changed"

	// CodeInvalidPath: a resource relPath is missing, not a string or has no surviving segment.
	CodeInvalidPath = "invalid_path"
	// CodePathTraversal: a resource relPath has a ".." segment.
	CodePathTraversal = "path_traversal"
	// CodeInvalidSegment: a relPath segment is empty, ".", ".." or starts with "." once the
	// characters outside [A-Za-z0-9._-] are stripped (".git", "~", "...").
	CodeInvalidSegment = "invalid_segment"
	// CodeLeadingDash: a relPath segment starts with "-".
	CodeLeadingDash = "leading_dash"
	// CodeTrailingDot: a relPath segment ends with ".".
	CodeTrailingDot = "trailing_dot"
	// CodeDeviceName: a relPath segment is a Windows device name (with or without extension).
	CodeDeviceName = "device_name"
	// CodeSegmentTooLong: a relPath segment is longer than MaxSegmentBytes.
	CodeSegmentTooLong = "segment_too_long"
	// CodeTooManySegments: a relPath has more than MaxPathSegments segments.
	CodeTooManySegments = "too_many_segments"
	// CodePathTooLong: a sanitized relPath is longer than MaxPathBytes.
	CodePathTooLong = "path_too_long"
	// CodeReservedPath: a relPath has a segment SKILL.md (any case) at any depth: the generated
	// SKILL.md owns that name at the root, and a harness that discovers skills recursively
	// (Codex) would load a nested one as a skill of its own.
	CodeReservedPath = "reserved_path"
	// CodeDuplicatePath: a relPath case-insensitively equals an earlier kept one (first wins).
	CodeDuplicatePath = "duplicate_path"
	// CodePathConflict: a relPath needs a directory where an earlier kept resource is a file,
	// or names a file where an earlier kept resource needs a directory.
	CodePathConflict = "path_conflict"
	// CodePathChanged: a relPath was sanitized to a different path (the resource is kept).
	CodePathChanged = "path_changed"
	// CodeInvalidContent: a resource content is missing or not a string.
	CodeInvalidContent = "invalid_content"
	// CodeContentTooLarge: a resource content is larger than MaxResourceBytes, or would take
	// its skill past MaxSkillResourceBytes.
	CodeContentTooLarge = "content_too_large"
	// CodeTooManyResources: the skill already keeps MaxResources resources.
	CodeTooManyResources = "too_many_resources"

	// CodeInvalidID: a server id is missing, not a string or does not match the id pattern.
	CodeInvalidID = "invalid_id"
	// CodeInvalidTransport: a server transport is neither absent/null, "stdio" nor "http" (R13).
	CodeInvalidTransport = "invalid_transport"
	// CodeInvalidCommand: a stdio server command breaks R12 (missing, not a string, blank,
	// surrounding whitespace, NUL/CR/LF, leading "-").
	CodeInvalidCommand = "invalid_command"
	// CodeInvalidURL: an http server has no string url.
	CodeInvalidURL = "invalid_url"
	// CodeNULInArg: an argument containing NUL was removed (R12).
	CodeNULInArg = "nul_in_arg"
	// CodeInvalidValue: an optional server field had a value outside its domain and was removed.
	CodeInvalidValue = "invalid_value"
	// CodeFieldIgnored: a field that the server's transport does not use was ignored
	// (command on an http server, url on a stdio server).
	CodeFieldIgnored = "field_ignored"
	// CodeAccessFieldInvalid: a field that narrows who or what may use a server
	// (credentials, users, enabled, disabled, availability, exposure, toolExposure, scope,
	// harnesses) had a value outside its domain: the server is dropped, never kept with the
	// field removed (a typo must not widen access).
	CodeAccessFieldInvalid = "access_field_invalid"
	// CodeEnabledAndDisabled: a server set both enabled and disabled; it is dropped.
	CodeEnabledAndDisabled = "enabled_and_disabled"
	// CodeInvalidOAuth: an http server's oauth member is not an object, has a member that is
	// not clientId, callbackPort, scopes or authServerMetadataUrl, or a value of the wrong type
	// or outside its domain: the server is dropped (a half-read sign-in setting fails closed).
	CodeInvalidOAuth = "invalid_oauth"
)

// Diagnostic kinds.
const (
	KindRequest  = "request"
	KindSkill    = "skill"
	KindResource = "resource"
	KindServer   = "server"
)

// RejectError is a whole-request refusal: nothing of the request may be used. It is shaped
// like fs.PathError: Field is the JSON path of the offending member or value ("" for the
// request itself), Code one of the Code* refusal constants, Message a human explanation.
type RejectError struct {
	Field   string
	Code    string
	Message string
}

func (e *RejectError) Error() string {
	field := e.Field
	if field == "" {
		field = "request"
	}
	return "request refused at " + field + ": " + e.Code + ": " + e.Message
}

func reject(field, code, msg string) *RejectError {
	return &RejectError{Field: field, Code: code, Message: msg}
}
