package spec

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loadout-dev/loadout/sdk/abi"
)

// Field names of the objects whose member names are compared with fields (R11). Keys of env,
// headers, toolExposure and tokens are free-form and never compared.
var (
	requestFields  = []string{"harness", "run", "skills", "mcpServers", "userServers", "tokens"}
	runFields      = []string{"ambientAuth", "user", "groups", "enabled", "id", "container", "builtinTools"}
	skillFields    = []string{"name", "description", "instructions", "resources"}
	resourceFields = []string{"relPath", "content"}
	serverFields   = []string{
		"id", "transport", "command", "args", "env", "url", "headers", "allowedTools",
		"secretKeys", "description", "enabled", "timeout", "exposure", "toolExposure", "cwd",
		"credentials", "sharedAuthority", "users", "disabled", "availability", "scope", "harnesses", "token",
		"oauth", "lifecycle", "idleTimeout",
	}
	tokenFields = []string{"mint", "ttl"}
	oauthFields = []string{"clientId", "callbackPort", "scopes", "authServerMetadataUrl"}
)

// Exposures a server or a tool may have; ExposureAlias is accepted and stored as its target.
const (
	ExposureDirect   = "direct"
	ExposureDeferred = "deferred"
	ExposureCodemode = "codemode"
	ExposureHidden   = "hidden"
	ExposureAlias    = "codemode-deferred"
)

// Availability and scope values of a server.
const (
	AvailabilityAll   = "all"
	AvailabilityOptIn = "opt-in"
	ScopeSession      = "session"
	ScopeSpace        = "space"
	ScopeApp          = "app"
)

// Credentials modes of a server.
const (
	CredentialsUser   = "user"
	CredentialsShared = "shared"
)

// Parse decodes a capability request strictly (R11) and applies every Go-side sanitization
// rule. It returns the sanitized request and one Diagnostic per dropped or changed entry, in
// request order; or, when the whole request is refused, a *RejectError and no request.
//
// Parse does not retain data; the returned values share no memory with it and belong to the
// caller. Parse is safe to call from several goroutines at once.
func Parse(data []byte) (*Request, []Diagnostic, error) {
	root, err := decode(data)
	if err != nil {
		return nil, nil, err
	}
	if root.kind != kindObject {
		return nil, nil, reject("", CodeNotObject, "the request is not a JSON object")
	}
	if err := checkFolds(&root); err != nil {
		return nil, nil, err
	}
	p := parser{diags: []Diagnostic{}}
	req := p.request(&root)
	if p.refusal != nil {
		return nil, nil, p.refusal
	}
	if len(req.Servers) == 0 && len(req.Skills) == 0 {
		if err := RefuseEmpty(p.diags); err != nil {
			return nil, nil, err
		}
	}
	return req, p.diags, nil
}

// RefuseEmpty is the refusal of a request left with no server and no skill to render when
// diags (Parse's) hold a mistake that fails closed: a field that narrows access with an
// invalid value, or an unknown member. Such a request is refused (exit 3) rather than
// rendered empty, so a typo is never an empty success; nil when there is no such mistake
// (drops for any other reason keep the documented empty render). Parse applies it to what it
// keeps; the host applies it again to what the policy leaves.
func RefuseEmpty(diags []Diagnostic) error {
	for _, d := range diags {
		if d.Code == CodeAccessFieldInvalid || d.Code == CodeEnabledAndDisabled || d.Code == CodeUnknownField {
			return reject(d.Field, d.Code, d.Message+"; nothing else is left to render, so the request is refused")
		}
	}
	return nil
}

// checkFolds refuses a member of the request, run, a skill, a resource or a server whose name
// is not a field name but folds to one (R11). It looks at every such object, kept or not.
func checkFolds(root *value) error {
	if err := foldCheck(root, requestFields, ""); err != nil {
		return err
	}
	if run, ok := root.get("run"); ok && run.kind == kindObject {
		if err := foldCheck(run, runFields, "run"); err != nil {
			return err
		}
	}
	if skills, ok := root.get("skills"); ok && skills.kind == kindArray {
		for i := range skills.elems {
			sk := &skills.elems[i]
			if sk.kind != kindObject {
				continue
			}
			prefix := indexPath("skills", i)
			if err := foldCheck(sk, skillFields, prefix); err != nil {
				return err
			}
			res, ok := sk.get("resources")
			if !ok || res.kind != kindArray {
				continue
			}
			for j := range res.elems {
				if r := &res.elems[j]; r.kind == kindObject {
					if err := foldCheck(r, resourceFields, indexPath(prefix+".resources", j)); err != nil {
						return err
					}
				}
			}
		}
	}
	for _, list := range []string{"mcpServers", "userServers"} {
		servers, ok := root.get(list)
		if !ok || servers.kind != kindArray {
			continue
		}
		for i := range servers.elems {
			if s := &servers.elems[i]; s.kind == kindObject {
				prefix := indexPath(list, i)
				if err := foldCheck(s, serverFields, prefix); err != nil {
					return err
				}
				if tok, ok := s.get("token"); ok && tok.kind == kindObject {
					if err := foldCheck(tok, tokenFields, prefix+".token"); err != nil {
						return err
					}
				}
				if oa, ok := s.get("oauth"); ok && oa.kind == kindObject {
					if err := foldCheck(oa, oauthFields, prefix+".oauth"); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func foldCheck(obj *value, fields []string, prefix string) error {
	for i := range obj.members {
		name := obj.members[i].name
		if isField(name, fields) {
			continue
		}
		// A member that folds to a field of this object, or of any other object of the
		// request (a serializer that renamed "name" to "Name" renamed the rest too), is
		// refused: only exact names are ever read.
		for _, set := range [][]string{fields, allFields} {
			for _, f := range set {
				if name != f && strings.EqualFold(name, f) {
					return reject(memberPath(prefix, name), CodeFoldedMember,
						"member name "+strconv.Quote(name)+" is not the field "+strconv.Quote(f)+" but folds to it")
				}
			}
		}
	}
	return nil
}

// allFields are the field names of every object of the request.
var allFields = slices.Concat(requestFields, runFields, skillFields, resourceFields, serverFields, tokenFields, oauthFields)

func isField(name string, fields []string) bool {
	for _, f := range fields {
		if name == f {
			return true
		}
	}
	return false
}

// parser collects diagnostics while one request is sanitized. It is used by one goroutine.
type parser struct {
	diags []Diagnostic
	// refusal is the first whole-request refusal found while sanitizing (a bad token member,
	// an unknown member of the request or run); Parse returns it instead of the request.
	refusal *RejectError
	// unknowns counts the unknown members of skills, resources and servers.
	unknowns int
	// droppedSecrets are the declared secrets of the servers dropped (Request.DroppedSecrets).
	droppedSecrets []string
}

// refuse records a whole-request refusal; the first one wins.
func (p *parser) refuse(field, code, msg string) {
	if p.refusal == nil {
		p.refusal = reject(field, code, msg)
	}
}

func (p *parser) add(kind, name, field, code, msg string) {
	p.diags = append(p.diags, Diagnostic{Kind: kind, Name: name, Field: field, Code: code, Message: msg})
}

func (p *parser) wrongType(kind, name, field, want string, v *value) {
	p.add(kind, name, field, CodeWrongType, "is "+kindName(v.kind)+", want "+want+"; ignored")
}

// MaxUnknownFieldDiagnostics is how many unknown_field diagnostics one request reports; the
// rest are counted in one last diagnostic, so a body of many unknown members cannot make a
// diagnostic list as large as itself.
const MaxUnknownFieldDiagnostics = 20

// unknownMembers reports every member of obj that is not one of fields and whether there was
// one: the entry (a skill, resource or server) is then dropped, since a misspelt field that
// narrows access must never leave the entry with wider access than asked for.
func (p *parser) unknownMembers(obj *value, fields []string, kind, name, prefix, what string) bool {
	found := false
	for i := range obj.members {
		n := obj.members[i].name
		if isField(n, fields) {
			continue
		}
		found = true
		p.unknowns++
		if p.unknowns > MaxUnknownFieldDiagnostics {
			continue
		}
		p.add(kind, name, memberPath(prefix, n), CodeUnknownField,
			"unknown field "+strconv.Quote(n)+suggest(n, fields)+"; "+what+" dropped")
	}
	return found
}

// unknownRefused refuses the request for a member of the request or of run that is not one of
// fields: a misspelt request-level field (mcpServer, run.user) is never read as absent.
func (p *parser) unknownRefused(prefix, name string, fields []string) {
	p.refuse(memberPath(prefix, name), CodeUnknownField,
		"unknown field "+strconv.Quote(name)+suggest(name, fields)+"; the request is refused")
}

// suggest names the field of fields nearest to name: " (did you mean allowedTools?)" when a
// few edits turn one into the other, else the list of fields.
func suggest(name string, fields []string) string {
	// A name much longer than every field is no misspelling of one; not comparing it keeps
	// the cost of a long member name linear.
	const maxLen = 64
	best, bestDist := "", maxLen
	if len(name) <= maxLen {
		lower := strings.ToLower(name)
		for _, f := range fields {
			if d := editDistance(lower, strings.ToLower(f)); d < bestDist {
				best, bestDist = f, d
			}
		}
	}
	if best != "" && bestDist <= max(2, len(best)/4) {
		return " (did you mean " + best + "?)"
	}
	return " (the fields are " + strings.Join(fields, ", ") + ")"
}

// editDistance is the Levenshtein distance between a and b, counted in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (p *parser) request(root *value) *Request {
	req := &Request{Skills: []Skill{}, Servers: []Server{}, Tokens: []Pair{}}
	var user []Server
	for i := range root.members {
		m := &root.members[i]
		v := &m.val
		switch m.name {
		case "harness":
			switch v.kind {
			case kindString:
				req.Harness = v.str
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "harness", "a string", v)
			}
		case "run":
			switch v.kind {
			case kindObject:
				p.run(v, &req.Run)
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "run", "an object", v)
			}
		case "skills":
			switch v.kind {
			case kindArray:
				req.Skills = p.skills(v)
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "skills", "an array", v)
			}
		case "mcpServers":
			switch v.kind {
			case kindArray:
				req.Servers = p.servers(v, SourceCatalog)
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "mcpServers", "an array", v)
			}
		case "userServers":
			switch v.kind {
			case kindArray:
				user = p.servers(v, SourceUser)
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "userServers", "an array", v)
			}
		case "tokens":
			switch v.kind {
			case kindObject:
				req.Tokens = p.stringMap(KindRequest, "", ref{"", "tokens"}, v)
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "tokens", "an object", v)
			}
		default:
			p.unknownRefused("", m.name, requestFields)
		}
	}
	if p.unknowns > MaxUnknownFieldDiagnostics {
		p.add(KindRequest, "", "", CodeUnknownField, strconv.Itoa(p.unknowns-MaxUnknownFieldDiagnostics)+
			" more unknown fields not listed; each dropped its entry")
	}
	// User servers come after the catalog's whatever the member order, so a catalog server
	// always wins an id both claim.
	req.Servers = append(req.Servers, user...)
	req.DroppedSecrets = p.droppedSecrets
	return req
}

func (p *parser) run(v *value, run *Run) {
	for i := range v.members {
		m := &v.members[i]
		switch m.name {
		case "ambientAuth":
			switch m.val.kind {
			case kindBool:
				run.AmbientAuth = m.val.b
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "run.ambientAuth", "a boolean", &m.val)
			}
		case "container":
			switch m.val.kind {
			case kindBool:
				run.Container = m.val.b
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "run.container", "a boolean", &m.val)
			}
		case "user":
			switch m.val.kind {
			case kindString:
				run.User = m.val.str
				run.HasUser = m.val.str != ""
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "run.user", "a string", &m.val)
			}
		case "groups":
			p.groups(&m.val, run)
		case "enabled":
			switch m.val.kind {
			case kindObject:
				run.Enabled = map[string]bool{}
				for j := range m.val.members {
					e := &m.val.members[j]
					if e.val.kind != kindBool {
						// Not a yes: the opt-in server stays off.
						p.wrongType(KindRequest, "", memberPath("run.enabled", e.name), "a boolean", &e.val)
						continue
					}
					run.Enabled[e.name] = e.val.b
				}
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "run.enabled", "an object", &m.val)
			}
		case "id":
			switch m.val.kind {
			case kindString:
				run.ID = m.val.str
			case kindNull:
			default:
				p.wrongType(KindRequest, "", "run.id", "a string", &m.val)
			}
		case "builtinTools":
			run.BuiltinTools = p.builtinTools(&m.val)
		default:
			p.unknownRefused("run", m.name, runFields)
		}
	}
}

// groups parses run.groups strictly: an array of distinct non-empty strings, or null. The
// groups a policy may grant access by are never guessed at: any other value refuses the
// request.
func (p *parser) groups(v *value, run *Run) {
	const field = "run.groups"
	switch v.kind {
	case kindNull:
		return
	case kindArray:
	default:
		p.refuse(field, CodeInvalidGroups, "is "+kindName(v.kind)+", want an array of group names")
		return
	}
	groups := make([]string, 0, len(v.elems))
	for i := range v.elems {
		e := &v.elems[i]
		switch {
		case e.kind != kindString:
			p.refuse(indexPath(field, i), CodeInvalidGroups, "is "+kindName(e.kind)+", want a group name")
			return
		case e.str == "":
			p.refuse(indexPath(field, i), CodeInvalidGroups, `is "", want a non-empty group name`)
			return
		case slicesContains(groups, e.str):
			p.refuse(indexPath(field, i), CodeInvalidGroups, strconv.Quote(e.str)+" is listed twice")
			return
		}
		groups = append(groups, e.str)
	}
	run.Groups = groups
}

// builtinTools reads run.builtinTools: null or a list of distinct tool names, each matching
// BuiltinToolPattern. It widens what the agent may do unasked, so anything else refuses the
// request (CodeInvalidBuiltinTools) rather than granting a guess.
func (p *parser) builtinTools(v *value) []string {
	switch v.kind {
	case kindNull:
		return []string{}
	case kindArray:
	default:
		p.refuse("run.builtinTools", CodeInvalidBuiltinTools, "run.builtinTools is "+kindName(v.kind)+", not a list of built-in tool names")
		return []string{}
	}
	out := make([]string, 0, len(v.elems))
	for i := range v.elems {
		e := &v.elems[i]
		field := indexPath("run.builtinTools", i)
		switch {
		case e.kind != kindString:
			p.refuse(field, CodeInvalidBuiltinTools, field+" is "+kindName(e.kind)+", not a tool name")
		case !validBuiltinTool(e.str):
			p.refuse(field, CodeInvalidBuiltinTools, field+" "+strconv.Quote(cut(e.str, 64))+" is not a tool name (^[A-Za-z][A-Za-z0-9_-]{0,63}$)")
		case slices.Contains(out, e.str):
			p.refuse(field, CodeInvalidBuiltinTools, field+" "+strconv.Quote(e.str)+" is listed twice")
		default:
			out = append(out, e.str)
			continue
		}
		return []string{}
	}
	return out
}

// BuiltinToolPattern is the shape of a run.builtinTools entry: a harness's own tool by its
// plain name (no rule syntax such as Bash(git:*), no separator a CLI would split at).
const BuiltinToolPattern = `^[A-Za-z][A-Za-z0-9_-]{0,63}$`

// cut is s shortened to at most n bytes, for a message.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func validBuiltinTool(s string) bool {
	if len(s) == 0 || len(s) > 64 || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// stringMap keeps the string values of an object in request order.
func (p *parser) stringMap(kind, name string, field ref, v *value) []Pair {
	out := make([]Pair, 0, len(v.members))
	for i := range v.members {
		m := &v.members[i]
		if m.val.kind != kindString {
			p.add(kind, name, memberPath(field.String(), m.name), CodeNonStringEntry,
				"value is "+kindName(m.val.kind)+", not a string; removed")
			continue
		}
		out = append(out, Pair{Name: m.name, Value: m.val.str})
	}
	return out
}

// stringList keeps the string entries of an array in request order.
func (p *parser) stringList(kind, name string, field ref, v *value) []string {
	out := make([]string, 0, len(v.elems))
	for i := range v.elems {
		e := &v.elems[i]
		if e.kind != kindString {
			p.add(kind, name, indexPath(field.String(), i), CodeNonStringEntry,
				"entry is "+kindName(e.kind)+", not a string; removed")
			continue
		}
		out = append(out, e.str)
	}
	return out
}

func (p *parser) skills(arr *value) []Skill {
	out := make([]Skill, 0, len(arr.elems))
	var seen map[string]struct{}
	for i := range arr.elems {
		e := &arr.elems[i]
		prefix := indexPath("skills", i)
		if e.kind != kindObject {
			p.add(KindSkill, "", prefix, CodeNotAnObject, "skill is "+kindName(e.kind)+", not an object; ignored")
			continue
		}
		sk, ok := p.skill(e, i, prefix, seen)
		if !ok {
			continue
		}
		if seen == nil {
			seen = make(map[string]struct{}, len(arr.elems))
		}
		seen[strings.ToLower(sk.Name)] = struct{}{}
		out = append(out, sk)
	}
	return out
}

// skill sanitizes one skill object. seen holds the lowercased names of the skills kept so far.
func (p *parser) skill(obj *value, index int, prefix string, seen map[string]struct{}) (Skill, bool) {
	raw := ""
	nameV, hasName := obj.get("name")
	if hasName && nameV.kind == kindString {
		raw = nameV.str
	}
	name, fallback := sanitizeSkillName(raw)
	if p.unknownMembers(obj, skillFields, KindSkill, name, prefix, "skill") {
		return Skill{}, false
	}
	instr, ok := obj.get("instructions")
	if !ok || instr.kind != kindString || instr.str == "" {
		p.add(KindSkill, name, prefix+".instructions", CodeMissingInstructions,
			"skill has no non-empty string instructions; dropped")
		return Skill{}, false
	}
	if _, dup := seen[strings.ToLower(name)]; dup {
		p.add(KindSkill, name, prefix+".name", CodeDuplicateName,
			"sanitized name "+strconv.Quote(name)+" is already taken by an earlier skill (case-insensitive); dropped")
		return Skill{}, false
	}
	switch {
	case present(nameV, hasName) && nameV.kind != kindString:
		p.add(KindSkill, name, prefix+".name", CodeNameFallback,
			"name is "+kindName(nameV.kind)+", not a string; using "+strconv.Quote(name))
	case fallback && raw != name:
		p.add(KindSkill, name, prefix+".name", CodeNameFallback,
			"name "+strconv.Quote(raw)+" has no usable name left; using "+strconv.Quote(name))
	case raw != name:
		p.add(KindSkill, name, prefix+".name", CodeNameChanged,
			"name "+strconv.Quote(raw)+" sanitized to "+strconv.Quote(name))
	}
	sk := Skill{Index: index, Name: name, Instructions: instr.str, Resources: []Resource{}}
	if d, ok := obj.get("description"); ok {
		switch d.kind {
		case kindString:
			desc, changed := sanitizeDescription(d.str)
			sk.Description = desc
			if changed {
				p.add(KindSkill, name, prefix+".description", CodeDescriptionChanged,
					"line breaks and control characters became spaces, and the text is cut to 1024 characters")
			}
		case kindNull:
		default:
			p.wrongType(KindSkill, name, prefix+".description", "a string", d)
		}
	}
	if r, ok := obj.get("resources"); ok {
		switch r.kind {
		case kindArray:
			sk.Resources = p.resources(r, prefix+".resources")
		case kindNull:
		default:
			p.wrongType(KindSkill, name, prefix+".resources", "an array", r)
		}
	}
	return sk, true
}

// resources sanitizes a skill's resources: each path is validated first, then de-duplicated
// case-insensitively (first wins), checked for file/directory conflicts with the kept ones,
// and held to MaxResources and the content caps.
func (p *parser) resources(arr *value, prefix string) []Resource {
	out := make([]Resource, 0, min(len(arr.elems), MaxResources))
	var files, dirs map[string]struct{}
	total := 0
	for i := range arr.elems {
		e := &arr.elems[i]
		rp := indexPath(prefix, i)
		if e.kind != kindObject {
			p.add(KindResource, "", rp, CodeNotAnObject, "resource is "+kindName(e.kind)+", not an object; ignored")
			continue
		}
		relV, hasRel := e.get("relPath")
		name := ""
		if hasRel && relV.kind == kindString {
			name = relV.str
		}
		if p.unknownMembers(e, resourceFields, KindResource, name, rp, "resource") {
			continue
		}
		if !hasRel || relV.kind != kindString {
			what := "missing"
			if hasRel {
				what = kindName(relV.kind)
			}
			p.add(KindResource, "", rp+".relPath", CodeInvalidPath, "relPath is "+what+", not a string; dropped")
			continue
		}
		path, prob := sanitizeRelPath(relV.str)
		if prob != nil {
			p.add(KindResource, relV.str, rp+".relPath", prob.code, prob.msg+"; dropped")
			continue
		}
		content, ok := e.get("content")
		if !ok || content.kind != kindString {
			what := "missing"
			if ok {
				what = kindName(content.kind)
			}
			p.add(KindResource, path, rp+".content", CodeInvalidContent, "content is "+what+", not a string; dropped")
			continue
		}
		if len(content.str) > MaxResourceBytes {
			p.add(KindResource, path, rp+".content", CodeContentTooLarge,
				"content is "+strconv.Itoa(len(content.str))+" bytes, more than the limit of "+strconv.Itoa(MaxResourceBytes)+"; dropped")
			continue
		}
		lower := strings.ToLower(path)
		if files == nil {
			files = make(map[string]struct{}, min(len(arr.elems), MaxResources))
			dirs = make(map[string]struct{})
		}
		if _, dup := files[lower]; dup {
			p.add(KindResource, path, rp+".relPath", CodeDuplicatePath,
				"relPath "+strconv.Quote(path)+" is already taken by an earlier resource (case-insensitive); dropped")
			continue
		}
		if conflict := pathConflict(lower, files, dirs); conflict != "" {
			p.add(KindResource, path, rp+".relPath", CodePathConflict, conflict+"; dropped")
			continue
		}
		if len(out) == MaxResources {
			p.add(KindResource, path, rp, CodeTooManyResources,
				"the skill already keeps "+strconv.Itoa(MaxResources)+" resources; dropped")
			continue
		}
		if total+len(content.str) > MaxSkillResourceBytes {
			p.add(KindResource, path, rp+".content", CodeContentTooLarge,
				"the skill's resources would exceed "+strconv.Itoa(MaxSkillResourceBytes)+" bytes; dropped")
			continue
		}
		total += len(content.str)
		files[lower] = struct{}{}
		for k := strings.IndexByte(lower, '/'); k >= 0; {
			dirs[lower[:k]] = struct{}{}
			n := strings.IndexByte(lower[k+1:], '/')
			if n < 0 {
				break
			}
			k += 1 + n
		}
		if path != relV.str {
			p.add(KindResource, path, rp+".relPath", CodePathChanged,
				"relPath "+strconv.Quote(relV.str)+" sanitized to "+strconv.Quote(path))
		}
		out = append(out, Resource{RelPath: path, Content: content.str})
	}
	return out
}

// pathConflict explains why lower (a lowercased sanitized path) cannot coexist with the kept
// files and directories, or returns "".
func pathConflict(lower string, files, dirs map[string]struct{}) string {
	if _, ok := dirs[lower]; ok {
		return "relPath names a file where an earlier resource needs a directory"
	}
	for k := strings.IndexByte(lower, '/'); k >= 0; {
		if _, ok := files[lower[:k]]; ok {
			return "relPath needs a directory where an earlier resource is a file"
		}
		n := strings.IndexByte(lower[k+1:], '/')
		if n < 0 {
			break
		}
		k += 1 + n
	}
	return ""
}

// servers checks the servers of mcpServers (source SourceCatalog) or userServers
// (SourceUser).
func (p *parser) servers(arr *value, source string) []Server {
	out := make([]Server, 0, len(arr.elems))
	list := "mcpServers"
	if source == SourceUser {
		list = "userServers"
	}
	for i := range arr.elems {
		e := &arr.elems[i]
		prefix := indexPath(list, i)
		if e.kind != kindObject {
			p.add(KindServer, "", prefix, CodeNotAnObject, "server is "+kindName(e.kind)+", not an object; ignored")
			continue
		}
		if s, ok := p.server(e, i, prefix, source); ok {
			out = append(out, s)
		} else {
			p.droppedSecrets = append(p.droppedSecrets, declaredSecrets(e)...)
		}
	}
	return out
}

// declaredSecrets returns the values a server object's own secretKeys name: env[key] and the
// header named key (in any case, as the policy matches headers), each a non-empty string.
func declaredSecrets(obj *value) []string {
	keys, ok := obj.get("secretKeys")
	if !ok || keys.kind != kindArray {
		return nil
	}
	var out []string
	for _, field := range []string{"env", "headers"} {
		m, ok := obj.get(field)
		if !ok || m.kind != kindObject {
			continue
		}
		for i := range m.members {
			e := &m.members[i]
			if e.val.kind != kindString || e.val.str == "" {
				continue
			}
			for j := range keys.elems {
				k := &keys.elems[j]
				if k.kind == kindString && (k.str == e.name || field == "headers" && strings.ToLower(k.str) == strings.ToLower(e.name)) {
					out = append(out, e.val.str)
					break
				}
			}
		}
	}
	return out
}

// server checks one server's structure. Ids are not de-duplicated here: the policy runs first.
// A user server's id is UserIDPrefix followed by the id it gives, and the id rules apply to
// that; it may not ask for a run token.
func (p *parser) server(obj *value, index int, prefix, source string) (Server, bool) {
	idV, ok := obj.get("id")
	id := ""
	if ok && idV.kind == kindString {
		id = idV.str
		if source == SourceUser {
			id = UserIDPrefix + id
		}
	}
	if tok, has := obj.get("token"); has && tok.kind != kindNull && source == SourceUser {
		p.refuse(prefix+".token", CodeUserServerToken, "a user server cannot ask for a run token: loadout mints run tokens for catalog servers only")
		return Server{}, false
	}
	if p.unknownMembers(obj, serverFields, KindServer, id, prefix, "server") {
		return Server{}, false
	}
	if !ok || idV.kind != kindString || !validID(id) {
		what := "missing"
		switch {
		case ok && idV.kind != kindString:
			what = kindName(idV.kind) + ", not a string"
		case ok && source == SourceUser:
			what = strconv.Quote(idV.str) + ", which as the user server id " + strconv.Quote(id) + " does not match ^[a-z0-9][a-z0-9_-]{0,63}$"
		case ok:
			what = strconv.Quote(id) + ", which does not match ^[a-z0-9][a-z0-9_-]{0,63}$"
		}
		p.add(KindServer, id, prefix+".id", CodeInvalidID, "id is "+what+"; server dropped")
		return Server{}, false
	}
	s := Server{
		Index: index, ID: id, Source: source, Transport: TransportStdio, Enabled: true,
		Args: []string{}, Env: []Pair{}, Headers: []Pair{}, AllowedTools: []string{},
		SecretKeys: []string{}, ToolExposure: []Pair{}, Users: []string{},
		Availability: AvailabilityAll, Scope: ScopeSession, Harnesses: []string{},
	}
	if t, ok := obj.get("transport"); ok && t.kind != kindNull {
		if t.kind != kindString || (t.str != TransportStdio && t.str != TransportHTTP) {
			what := kindName(t.kind)
			if t.kind == kindString {
				what = strconv.Quote(t.str)
			}
			p.add(KindServer, id, prefix+".transport", CodeInvalidTransport,
				"transport is "+what+`, not "stdio" or "http"; server dropped`)
			return Server{}, false
		}
		s.Transport = t.str
	}
	if s.Transport == TransportStdio {
		c, ok := obj.get("command")
		if !ok || c.kind != kindString {
			what := "missing"
			if ok {
				what = kindName(c.kind) + ", not a string"
			}
			p.add(KindServer, id, prefix+".command", CodeInvalidCommand, "command is "+what+"; server dropped")
			return Server{}, false
		}
		if why := commandProblem(c.str); why != "" {
			p.add(KindServer, id, prefix+".command", CodeInvalidCommand, "command "+why+"; server dropped")
			return Server{}, false
		}
		s.Command = c.str
	} else {
		u, ok := obj.get("url")
		if !ok || u.kind != kindString {
			what := "missing"
			if ok {
				what = kindName(u.kind) + ", not a string"
			}
			p.add(KindServer, id, prefix+".url", CodeInvalidURL, "url is "+what+"; server dropped")
			return Server{}, false
		}
		s.URL = u.str
	}
	en, hasEnabled := obj.get("enabled")
	dis, hasDisabled := obj.get("disabled")
	if hasEnabled && hasDisabled && en.kind != kindNull && dis.kind != kindNull {
		p.add(KindServer, id, prefix+".disabled", CodeEnabledAndDisabled, "enabled and disabled are both set: give one; server dropped")
		return Server{}, false
	}
	for i := range obj.members {
		if !p.serverField(&s, &obj.members[i], prefix) {
			return Server{}, false
		}
	}
	return s, true
}

// refuseServer drops the server for a field that narrows access and has a value outside its domain.
func (p *parser) refuseServer(id, path, what, want string) bool {
	name := path[strings.LastIndexByte(path, '.')+1:]
	p.add(KindServer, id, path, CodeAccessFieldInvalid, name+" is "+what+", not "+want+"; server dropped (a field that narrows access fails closed)")
	return false
}

// describe is v as a diagnostic names it: a quoted string, or its kind.
func describe(v *value) string {
	if v.kind == kindString {
		return strconv.Quote(v.str)
	}
	return kindName(v.kind)
}

// serverField applies one optional member of a valid server and reports whether the server is
// kept. A bad value of a field that narrows access drops the server (fail closed); any other
// bad value is removed with a diagnostic.
func (p *parser) serverField(s *Server, m *member, prefix string) bool {
	v := &m.val
	if v.kind == kindNull {
		return true
	}
	field := ref{prefix, m.name}
	id := s.ID
	switch m.name {
	case "command":
		if s.Transport != TransportStdio {
			p.add(KindServer, id, field.String(), CodeFieldIgnored, "an http server has no command; ignored")
		}
	case "url":
		if s.Transport != TransportHTTP {
			p.add(KindServer, id, field.String(), CodeFieldIgnored, "a stdio server has no url; ignored")
		}
	case "args":
		if v.kind != kindArray {
			p.wrongType(KindServer, id, field.String(), "an array", v)
			return true
		}
		args := make([]string, 0, len(v.elems))
		for i := range v.elems {
			e := &v.elems[i]
			switch {
			case e.kind != kindString:
				p.add(KindServer, id, indexPath(field.String(), i), CodeNonStringEntry,
					"entry is "+kindName(e.kind)+", not a string; removed")
			case strings.IndexByte(e.str, 0) >= 0:
				p.add(KindServer, id, indexPath(field.String(), i), CodeNULInArg, "argument contains NUL; removed")
			default:
				args = append(args, e.str)
			}
		}
		s.Args = args
	case "env", "headers", "toolExposure":
		if v.kind != kindObject {
			if m.name == "toolExposure" {
				return p.refuseServer(id, field.String(), kindName(v.kind), "an object")
			}
			p.wrongType(KindServer, id, field.String(), "an object", v)
			return true
		}
		pairs := p.stringMap(KindServer, id, field, v)
		switch m.name {
		case "env":
			s.Env = pairs
		case "headers":
			s.Headers = pairs
		default:
			if len(pairs) != len(v.members) {
				return p.refuseServer(id, field.String(), "an object with a non-string value", "an object of exposures")
			}
			kept := pairs[:0]
			for _, pr := range pairs {
				e, ok := exposure(pr.Value)
				if !ok {
					return p.refuseServer(id, memberPath(field.String(), pr.Name), strconv.Quote(pr.Value), "direct, deferred, codemode, codemode-deferred or hidden")
				}
				kept = append(kept, Pair{Name: pr.Name, Value: e})
			}
			s.ToolExposure = kept
		}
	case "allowedTools":
		s.ToolsDeclared = true // R10: any non-null value restricts the server
		if v.kind != kindArray {
			p.add(KindServer, id, field.String(), CodeWrongType,
				"is "+kindName(v.kind)+", not an array; the server is restricted to no tool")
			return true
		}
		s.AllowedTools = p.stringList(KindServer, id, field, v)
	case "users":
		if v.kind != kindArray {
			return p.refuseServer(id, field.String(), kindName(v.kind), "an array of user names")
		}
		users := make([]string, 0, len(v.elems))
		for i := range v.elems {
			e := &v.elems[i]
			switch {
			case e.kind != kindString:
				return p.refuseServer(id, indexPath(field.String(), i), kindName(e.kind), "a user name")
			case e.str == "":
				return p.refuseServer(id, indexPath(field.String(), i), `""`, "a non-empty user name")
			case slicesContains(users, e.str):
				return p.refuseServer(id, indexPath(field.String(), i), strconv.Quote(e.str)+" again", "a user name listed once")
			}
			users = append(users, e.str)
		}
		s.Users, s.HasUsers = users, true
	case "harnesses":
		if v.kind != kindArray {
			return p.refuseServer(id, field.String(), kindName(v.kind), "an array of harness names")
		}
		hs := make([]string, 0, len(v.elems))
		for i := range v.elems {
			e := &v.elems[i]
			if e.kind != kindString || !validID(e.str) {
				return p.refuseServer(id, indexPath(field.String(), i), describe(e), "a harness name")
			}
			hs = append(hs, e.str)
		}
		s.Harnesses, s.HasHarnesses = hs, true
	case "secretKeys":
		if v.kind != kindArray {
			p.wrongType(KindServer, id, field.String(), "an array", v)
			return true
		}
		s.SecretKeys = p.stringList(KindServer, id, field, v)
	case "description":
		if v.kind != kindString {
			p.wrongType(KindServer, id, field.String(), "a string", v)
			return true
		}
		desc, changed := sanitizeDescription(v.str)
		s.Description = desc
		if changed {
			p.add(KindServer, id, field.String(), CodeDescriptionChanged,
				"line breaks and control characters became spaces, and the text is cut to 1024 characters")
		}
	case "enabled", "disabled":
		if v.kind != kindBool {
			return p.refuseServer(id, field.String(), describe(v), "a boolean")
		}
		if m.name == "enabled" {
			s.Enabled = v.b
			s.Disabled = !v.b
		} else {
			s.Disabled = v.b
			s.Enabled = !v.b
		}
	case "availability":
		if v.kind != kindString || (v.str != AvailabilityAll && v.str != AvailabilityOptIn) {
			return p.refuseServer(id, field.String(), describe(v), `"all" or "opt-in"`)
		}
		s.Availability = v.str
	case "scope":
		if v.kind != kindString || (v.str != ScopeSession && v.str != ScopeSpace && v.str != ScopeApp) {
			return p.refuseServer(id, field.String(), describe(v), `"session", "space" or "app"`)
		}
		s.Scope = v.str
	case "timeout":
		if v.kind != kindNumber {
			p.wrongType(KindServer, id, field.String(), "a number", v)
			return true
		}
		f, err := strconv.ParseFloat(v.str, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			p.add(KindServer, id, field.String(), CodeInvalidValue, "timeout "+v.str+" is not a positive number of seconds; removed")
			return true
		}
		s.Timeout = f
	case "exposure":
		e, ok := exposure(v.str)
		if v.kind != kindString || !ok {
			return p.refuseServer(id, field.String(), describe(v), "direct, deferred, codemode, codemode-deferred or hidden")
		}
		s.Exposure = e
	case "cwd", "sharedAuthority":
		if v.kind != kindString {
			p.wrongType(KindServer, id, field.String(), "a string", v)
			return true
		}
		if m.name == "cwd" {
			s.Cwd = v.str
		} else {
			s.SharedAuthority = v.str
		}
	case "credentials":
		if v.kind != kindString || (v.str != CredentialsUser && v.str != CredentialsShared) {
			return p.refuseServer(id, field.String(), describe(v), `"user" or "shared"`)
		}
		s.Credentials = v.str
	case "token":
		p.token(s, v, field.String())
	case "oauth":
		if s.Transport != TransportHTTP {
			p.add(KindServer, id, field.String(), CodeFieldIgnored, "a stdio server has no oauth; ignored")
			return true
		}
		return p.oauth(s, v, field.String())
	case "lifecycle":
		if v.kind != kindString || !validLifecycle(v.str) {
			p.add(KindServer, id, field.String(), CodeInvalidValue, "lifecycle is "+describe(v)+", not lazy, eager, keep-alive or lazy-keep-alive; removed")
			return true
		}
		s.Lifecycle = v.str
	case "idleTimeout":
		if v.kind != kindNumber {
			p.wrongType(KindServer, id, field.String(), "a number", v)
			return true
		}
		f, err := strconv.ParseFloat(v.str, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			p.add(KindServer, id, field.String(), CodeInvalidValue, "idleTimeout "+v.str+" is not a positive number of minutes; removed")
			return true
		}
		s.IdleTimeout = f
	}
	return true
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// token parses a server's token member strictly: {"mint": bool, "ttl": "<Go duration>"},
// both optional. Anything else refuses the whole request: a server that asked for a
// credential must not be rendered without it, nor dropped while the rest renders as if
// nothing happened.
func (p *parser) token(s *Server, v *value, field string) {
	if v.kind != kindObject {
		p.refuse(field, CodeInvalidToken, "is "+kindName(v.kind)+`, want an object such as {"mint": true, "ttl": "2h"}`)
		return
	}
	var tr TokenRequest
	for i := range v.members {
		m := &v.members[i]
		mv := &m.val
		mf := memberPath(field, m.name)
		switch m.name {
		case "mint":
			switch mv.kind {
			case kindBool:
				tr.Mint = mv.b
			case kindNull:
			default:
				p.refuse(mf, CodeInvalidToken, "is "+kindName(mv.kind)+", want a boolean")
				return
			}
		case "ttl":
			switch mv.kind {
			case kindString:
				d, err := time.ParseDuration(mv.str)
				if err != nil || d <= 0 {
					p.refuse(mf, CodeInvalidToken, "ttl "+strconv.Quote(mv.str)+` is not a positive Go duration such as "90m" or "2h"`)
					return
				}
				tr.TTL = d
			case kindNull:
			default:
				p.refuse(mf, CodeInvalidToken, "is "+kindName(mv.kind)+`, want a Go duration string such as "2h"`)
				return
			}
		default:
			p.refuse(mf, CodeInvalidToken, "unknown member "+strconv.Quote(m.name)+" (a token has mint and ttl)")
			return
		}
	}
	s.Token = tr
}

// exposure validates an exposure value, mapping the alias to its target.
func exposure(v string) (string, bool) {
	switch v {
	case ExposureDirect, ExposureDeferred, ExposureCodemode, ExposureHidden:
		return v, true
	case ExposureAlias:
		return ExposureCodemode, true
	}
	return "", false
}

// validID reports whether id matches ^[a-z0-9][a-z0-9_-]{0,63}$. The stricter id rules (R2)
// are policy.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// commandProblem says how cmd breaks R12, or returns "".
func commandProblem(cmd string) string {
	switch {
	case cmd == "":
		return "is empty"
	case strings.TrimSpace(cmd) == "":
		return "is blank"
	case strings.TrimSpace(cmd) != cmd:
		return "has surrounding whitespace"
	case strings.ContainsAny(cmd, "\x00\r\n"):
		return "contains NUL, CR or LF"
	case cmd[0] == '-':
		return `starts with "-"`
	}
	return ""
}

func kindName(k kind) string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "a boolean"
	case kindNumber:
		return "a number"
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	default:
		return "an object"
	}
}

// ref is the path of a member, spelled only when a diagnostic needs it: building every
// member's path up front would cost an allocation per member.
type ref struct{ prefix, name string }

func (r ref) String() string { return memberPath(r.prefix, r.name) }

// memberPath is prefix followed by member name, as pathString spells it.
func memberPath(prefix, name string) string {
	var b strings.Builder
	b.WriteString(prefix)
	appendElem(&b, pathElem{name: name}, prefix == "")
	return b.String()
}

func indexPath(prefix string, i int) string {
	return prefix + "[" + strconv.Itoa(i) + "]"
}

// Transports, as abi spells them.
const (
	TransportStdio = abi.TransportStdio
	TransportHTTP  = abi.TransportHTTP
)
