package plan

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loadout-dev/loadout/internal/namepattern"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// Secret is one secret placeholder of the vetted request and the one place it may appear: the
// value at Key of Field (FieldEnv or FieldHeaders) of server Server. Value is the secret itself;
// Check never reads it (only materialize substitutes it).
type Secret struct {
	Placeholder string // {{loadout.secret.N}}
	Value       string
	Server      string
	Field       string
	Key         string
}

// Fields a secret may belong to.
const (
	FieldEnv     = "env"
	FieldHeaders = "headers"
)

// Blob is one content-by-reference placeholder and its content. Check never reads Value.
type Blob struct {
	Placeholder string // {{loadout.blob.N}}
	Value       string
}

// Limits bound a plan. A zero field takes the default documented next to it; for the counts a
// request can grow (files, args, prompt, warnings, git excludes, total bytes) that default
// grows with the vetted request the plan renders (forRequest), so a vetted request of any size
// can be rendered while a plan never holds more than its request accounts for. A field the
// caller sets is a fixed cap.
type Limits struct {
	MaxFiles        int // files per plan; default 1024
	MaxFileBytes    int // content bytes per file, before substitution; default 4 MiB
	MaxTotalBytes   int // content bytes of all files, before substitution; default 32 MiB
	MaxArgs         int // args; default 512
	MaxArgBytes     int // bytes per arg; default 4096
	MaxEnv          int // env entries; default 64
	MaxPromptBytes  int // prompt bytes, before substitution; default 256 KiB
	MaxGitExclude   int // gitExclude entries; default 64
	MaxWarnings     int // warnings; default 1024
	MaxWarningBytes int // bytes of a warning's code+message+server+skill; default 2048
}

// DefaultLimits are the limits a zero Limits stands for.
var DefaultLimits = Limits{
	MaxFiles:        1024,
	MaxFileBytes:    4 << 20,
	MaxTotalBytes:   32 << 20,
	MaxArgs:         512,
	MaxArgBytes:     4096,
	MaxEnv:          64,
	MaxPromptBytes:  256 << 10,
	MaxGitExclude:   64,
	MaxWarnings:     1024,
	MaxWarningBytes: 2048,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&l.MaxFiles, d.MaxFiles)
	set(&l.MaxFileBytes, d.MaxFileBytes)
	set(&l.MaxTotalBytes, d.MaxTotalBytes)
	set(&l.MaxArgs, d.MaxArgs)
	set(&l.MaxArgBytes, d.MaxArgBytes)
	set(&l.MaxEnv, d.MaxEnv)
	set(&l.MaxPromptBytes, d.MaxPromptBytes)
	set(&l.MaxGitExclude, d.MaxGitExclude)
	set(&l.MaxWarnings, d.MaxWarnings)
	set(&l.MaxWarningBytes, d.MaxWarningBytes)
	return l
}

// Per vetted entry, what a plan may add on top of Limits: a harness writes a server's name and
// each of its tools as their own args (tool rules), a line or two of prompt per server and tool,
// a warning or two per server and skill, and a file per skill resource.
const (
	argsPerServer        = 4
	argsPerTool          = 2
	promptPerServer      = 2 << 10
	promptPerTool        = 256
	promptPerSkill       = 1 << 10
	warningsPerServer    = 8
	warningsPerSkill     = 4
	filesPerSkill        = 2
	gitExcludesPerSkill  = 1
	totalBytesPerRequest = 4 // × the request's content bytes: each may be written once per file that quotes it
)

// forRequest returns the limits of a plan for req: each field set in l as it is, each zero
// field its default grown by what req accounts for (see the per-entry constants).
func (l Limits) forRequest(req abi.Request) Limits {
	tools, contentBytes, files := 0, 0, 0
	for _, s := range req.Servers {
		tools += len(s.AllowedTools) + len(s.DeniedTools) + len(s.ToolExposure)
	}
	for _, sk := range req.Skills {
		files += filesPerSkill + len(sk.Resources)
		contentBytes += len(sk.Instructions) + len(sk.Description)
		for _, r := range sk.Resources {
			contentBytes += len(r.Content)
		}
	}
	servers, skills := len(req.Servers), len(req.Skills)
	d := DefaultLimits
	grow := func(v *int, def, by int) {
		if *v <= 0 {
			*v = def + by
		}
	}
	grow(&l.MaxArgs, d.MaxArgs, argsPerServer*servers+argsPerTool*tools)
	grow(&l.MaxPromptBytes, d.MaxPromptBytes, promptPerServer*servers+promptPerTool*tools+promptPerSkill*skills)
	grow(&l.MaxWarnings, d.MaxWarnings, warningsPerServer*servers+warningsPerSkill*skills)
	grow(&l.MaxFiles, d.MaxFiles, files)
	grow(&l.MaxGitExclude, d.MaxGitExclude, gitExcludesPerSkill*skills)
	grow(&l.MaxTotalBytes, d.MaxTotalBytes, totalBytesPerRequest*contentBytes)
	return l.withDefaults()
}

// Input is everything Check compares a plan with. It is read, never modified.
type Input struct {
	Manifest abi.Manifest // the plugin's manifest (roots, harness)
	// Profile is the reviewed, pinned profile of the manifest's harness: what the plan is
	// read and checked through. A plan without one is refused (RuleProfile).
	Profile *Profile
	Request abi.Request // the vetted request the plugin rendered
	Secrets []Secret    // every secret placeholder of Request
	Blobs   []Blob      // every blob placeholder of Request
	Limits  Limits
}

// Rule codes of a Violation. They are stable: callers and tests branch on them.
const (
	RuleLimit            = "limit"            // a count or size cap is exceeded
	RuleEncoding         = "encoding"         // a string is not valid UTF-8 or holds NUL
	RuleRoot             = "root"             // a file's root is not one of the manifest's
	RulePath             = "path"             // a path is not a clean, local, portable path
	RulePathNotAllowed   = "path_not_allowed" // the harness may not write there
	RulePathDuplicate    = "path_duplicate"   // two files with the same or case-colliding path
	RulePathConflict     = "path_conflict"    // a file is also another file's directory
	RuleMode             = "mode"             // mode is not 0600/0644, or not 0600 for a secret file
	RuleSecretFile       = "secret_file"      // a secret file under the checkout
	RuleFormat           = "format"           // unknown format
	RuleContent          = "content"          // content does not parse as its format
	RulePlaceholder      = "placeholder"      // an unknown or malformed placeholder
	RuleSecretPlacement  = "secret_placement" // a secret placeholder outside its approved place
	RuleBlobPlacement    = "blob_placement"   // a blob placeholder outside file contents and prompt
	RuleRootPlacement    = "root_placement"   // a root placeholder where none may be
	RuleEnv              = "env"              // an invalid, refused or duplicate env name
	RuleArg              = "arg"              // an argument the harness may not receive
	RuleGitExclude       = "git_exclude"      // a gitExclude entry that is not a local checkout path
	RuleWarning          = "warning"          // an empty or oversize warning
	RuleHarness          = "harness"          // manifest and request disagree on the harness
	RuleProfile          = "profile"          // no profile for the manifest's harness
	RuleConfigMissing    = "config_missing"   // the harness config file is absent or not unique
	RuleConfigKey        = "config_key"       // the harness config holds a key loadout does not allow
	RuleServerSet        = "server_set"       // servers added, reordered or silently omitted
	RuleServerMismatch   = "server_mismatch"  // a server differs from its vetted definition
	RuleToolRestrictions = "tool_restriction" // a tool grant beyond the vetted allowedTools
	RuleSkill            = "skill"            // a skill missing, added, or differing from its vetted definition
	RulePrompt           = "prompt"           // the prompt is not the one the host writes for the vetted request
	// The env wrapper of a stdio server (docs/SPAWN-ENV.md):
	RuleSpawnWrapper = "spawn_wrapper" // an env option other than -i, -C <vetted cwd>, -S SPEC, or not the vetted command after them
	RuleSpawnSpec    = "spawn_spec"    // SPEC holds anything but NAME=<alias references> tokens
	RuleSpawnAlias   = "spawn_alias"   // an alias missing, unused, reused, misnumbered or mis-encoded, or an env entry that is no alias
	RuleSpawnEnv     = "spawn_env"     // the environment the wrapper gives is not exactly the vetted spawn env
)

// Violation is one way a plan breaks the rules.
type Violation struct {
	File  string // root:path of the file concerned, or files[i] when those are unusable
	Field string // the plan member or config location concerned, e.g. args[3], env[0].name
	Rule  string // one of the Rule* constants
	Msg   string
}

func (v *Violation) Error() string {
	var b strings.Builder
	b.WriteString("plan ")
	switch {
	case v.File != "" && v.Field != "":
		b.WriteString(v.File + " " + v.Field)
	case v.File != "":
		b.WriteString(v.File)
	default:
		b.WriteString(v.Field)
	}
	b.WriteString(": " + v.Rule + ": " + v.Msg)
	return b.String()
}

// Violations returns every *Violation joined in err (as Check returns it).
func Violations(err error) []*Violation {
	var out []*Violation
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if v, ok := e.(*Violation); ok {
			out = append(out, v)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		walk(errors.Unwrap(e))
	}
	walk(err)
	return out
}

// checker accumulates violations for one Check call.
type checker struct {
	in      Input
	lim     Limits
	h       *harness            // the profile's rules
	secrets map[string][]Secret // by placeholder: every place the vetted request put it
	blobs   map[string]bool
	vs      []error
	// allowedToolsFlag: the args hold --allowedTools (set by the claude argument rule).
	allowedToolsFlag bool
	// builtinRules are the built-in tools the tools flag names.
	builtinRules map[string]bool
	// denyRules: the rules the deny flag holds (set by the denyTools argument rule), and
	// vettedDeny the rules of every tool a vetted server denies.
	denyRules, vettedDeny map[string]bool
	// rules: what each rule of the tools flag names (built by ruleTargets).
	rules map[string][]ruleTarget
	// warned: the servers a plan warning names (set by compareServers).
	warned map[string]bool
	// offered: the vetted servers the harness config holds (set by compareServers).
	offered map[string]bool
	// warnCodes: the codes of the plan warnings naming each server.
	warnCodes map[string]map[string]bool
	// serverArgs: the values of each flag of value servers (checkHarnessArgs); renderedIDs:
	// the ids of the servers the config renders, in order (compareServers; nil when the config
	// could not be read).
	serverArgs  []serverArg
	renderedIDs []string
}

func (c *checker) add(file, field, rule, format string, args ...any) {
	c.vs = append(c.vs, &Violation{File: file, Field: field, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

// Checked is a plan that passed Check, with the Input it was checked against. Only Check makes
// one, so a function that takes a *Checked (materialize.Write, DryRun) cannot be handed an
// unchecked plan, and the plan is checked once per render. It holds its own copy of the plan's
// lists: changing the plan Check was given does not change what was checked. A Checked is
// immutable and safe to use from several goroutines.
type Checked struct {
	plan abi.Plan
	in   Input
}

// Plan returns a copy of the checked plan (its lists copied: changing them does not change c).
func (c *Checked) Plan() abi.Plan { return clonePlan(&c.plan) }

// Input returns what the plan was checked against. Its slices are shared with c: read them only.
func (c *Checked) Input() Input { return c.in }

// clonePlan copies p and its lists (strings are immutable; a File is a value).
func clonePlan(p *abi.Plan) abi.Plan {
	out := *p
	out.Files = slices.Clone(p.Files)
	out.Args = slices.Clone(p.Args)
	out.Env = slices.Clone(p.Env)
	out.GitExclude = slices.Clone(p.GitExclude)
	out.Warnings = slices.Clone(p.Warnings)
	return out
}

// Check verifies a plugin's plan against the rules of docs/SECURITY.md §3 and the vetted request,
// treating the plugin as hostile. It returns the checked plan, or every violation found, joined
// with errors.Join (use Violations or errors.As to read them). It modifies p in one way only: an
// empty prompt becomes the one the host writes for the request (the Checked holds that prompt
// too). It never modifies in, never panics, and is safe to call from several goroutines on
// different plans.
//
// Placeholders: a secret placeholder may appear only in the content of a file with Secret set
// (and, for a built-in harness, only in its config file at the place the vetted request put
// it); a blob placeholder only in file contents (never in markdown front matter) and the
// prompt; a root placeholder in file contents, args, env values and the prompt, never in a
// path, an env name, a gitExclude entry or a warning (those are relative names or plain text).
func Check(p *abi.Plan, in Input) (*Checked, error) {
	if p == nil {
		return nil, &Violation{Rule: RuleContent, Msg: "no plan"}
	}
	if err := check(p, in); err != nil {
		return nil, err
	}
	return &Checked{plan: clonePlan(p), in: in}, nil
}

// check is Check's work: every violation of p, joined.
func check(p *abi.Plan, in Input) error {
	c := &checker{in: in, lim: in.Limits.forRequest(in.Request), secrets: map[string][]Secret{}, blobs: map[string]bool{}, offered: map[string]bool{}}
	if in.Profile == nil || in.Profile.h == nil || in.Profile.Harness != in.Manifest.Harness {
		return &Violation{Rule: RuleProfile, Msg: fmt.Sprintf("harness %q has no reviewed profile: its plan cannot be checked, so it is refused", in.Manifest.Harness)}
	}
	c.h = in.Profile.h
	for _, s := range in.Secrets {
		c.secrets[s.Placeholder] = append(c.secrets[s.Placeholder], s)
	}
	for _, b := range in.Blobs {
		c.blobs[b.Placeholder] = true
	}
	if in.Request.Harness != "" && in.Request.Harness != in.Manifest.Harness {
		c.add("", "", RuleHarness, "plugin renders harness %q, request is for %q", in.Manifest.Harness, in.Request.Harness)
	}
	c.checkFiles(p.Files)
	c.checkArgs(p.Args)
	c.checkEnv(p.Env)
	c.checkPrompt(p.Prompt)
	c.checkGitExclude(p.GitExclude)
	c.checkWarnings(p.Warnings)
	if c.h.serversKey != "" {
		c.checkConfig(p)
	}
	c.checkServerArgs()
	c.checkSkills(p)
	c.comparePrompt(p)
	return errors.Join(c.vs...)
}

// placement says which placeholder kinds a string may hold.
type placement struct {
	secret, blob, root bool
}

// checkPlaceholders reports every unknown placeholder in s, and every known one of a kind
// not allowed here. It returns the secret occurrences.
func (c *checker) checkPlaceholders(file, field, s string, allow placement) []Occurrence {
	var secrets []Occurrence
	for _, o := range Scan(s) {
		switch o.Kind {
		case KindSecret:
			if _, ok := c.secrets[o.Text]; !ok {
				c.add(file, field, RulePlaceholder, "unknown secret placeholder %q", o.Text)
				continue
			}
			if !allow.secret {
				c.add(file, field, RuleSecretPlacement, "secret placeholder %s may not appear here", o.Text)
				continue
			}
			secrets = append(secrets, o)
		case KindBlob:
			if !c.blobs[o.Text] {
				c.add(file, field, RulePlaceholder, "unknown blob placeholder %q", o.Text)
			} else if !allow.blob {
				c.add(file, field, RuleBlobPlacement, "blob placeholder %s may not appear here", o.Text)
			}
		case KindRoot:
			if o.ID != abi.RootConfig && o.ID != abi.RootRun && o.ID != abi.RootCheckout {
				c.add(file, field, RulePlaceholder, "unknown root placeholder %q", o.Text)
			} else if !allow.root {
				c.add(file, field, RuleRootPlacement, "root placeholder %s may not appear here", o.Text)
			}
		default:
			c.add(file, field, RulePlaceholder, "malformed placeholder %q", truncate(o.Text, 64))
		}
	}
	return secrets
}

// checkText reports invalid UTF-8 and NUL in a plain string.
func (c *checker) checkText(file, field, s string) bool {
	if !utf8.ValidString(s) {
		c.add(file, field, RuleEncoding, "not valid UTF-8")
		return false
	}
	if strings.IndexByte(s, 0) >= 0 {
		c.add(file, field, RuleEncoding, "holds a NUL byte")
		return false
	}
	return true
}

var validModes = map[string]bool{"0600": true, "0644": true}

func (c *checker) checkFiles(files []abi.File) {
	if len(files) > c.lim.MaxFiles {
		c.add("", "files", RuleLimit, "%d files, at most %d allowed", len(files), c.lim.MaxFiles)
		return
	}
	total := 0
	seen := map[string]string{} // folded root:path → original
	var ok []abi.File
	for i, f := range files {
		name := "files[" + strconv.Itoa(i) + "]"
		pathOK := c.checkRootAndPath(name, f)
		if pathOK {
			name = f.Root + ":" + f.Path
		}
		if !validModes[f.Mode] {
			c.add(name, "mode", RuleMode, "mode %q, want 0600 or 0644", truncate(f.Mode, 16))
		} else if f.Secret && f.Mode != "0600" {
			c.add(name, "mode", RuleMode, "a secret file must have mode 0600, not %s", f.Mode)
		}
		if f.Secret && f.Root == abi.RootCheckout {
			c.add(name, "secret", RuleSecretFile, "a secret file may not be written under the checkout")
		}
		total += len(f.Content)
		if len(f.Content) > c.lim.MaxFileBytes {
			c.add(name, "content", RuleLimit, "%d content bytes, at most %d allowed", len(f.Content), c.lim.MaxFileBytes)
			continue
		}
		c.checkContent(name, f)
		if pathOK {
			key := f.Root + ":" + fold(f.Path)
			if prev, dup := seen[key]; dup {
				c.add(name, "path", RulePathDuplicate, "collides with %s", prev)
				continue
			}
			seen[key] = name
			ok = append(ok, f)
		}
	}
	if total > c.lim.MaxTotalBytes {
		c.add("", "files", RuleLimit, "%d content bytes in all, at most %d allowed", total, c.lim.MaxTotalBytes)
	}
	// File/directory conflicts: no file's path may be a directory prefix of another's.
	for _, f := range ok {
		segs := strings.Split(f.Path, "/")
		for n := 1; n < len(segs); n++ {
			dir := f.Root + ":" + fold(strings.Join(segs[:n], "/"))
			if other, clash := seen[dir]; clash {
				c.add(f.Root+":"+f.Path, "path", RulePathConflict, "its directory %s is also a file", other)
			}
		}
	}
}

func (c *checker) checkRootAndPath(name string, f abi.File) bool {
	okRoot := false
	for _, r := range c.in.Manifest.Roots {
		if r == f.Root && (r == abi.RootConfig || r == abi.RootRun || r == abi.RootCheckout) {
			okRoot = true
		}
	}
	if !okRoot {
		c.add(name, "root", RuleRoot, "root %q is not one of the plugin's roots %q", truncate(f.Root, 32), c.in.Manifest.Roots)
	}
	if msg := pathProblem(f.Path, c.h.hiddenUnder(f.Root)); msg != "" {
		c.add(name, "path", RulePath, "path %q: %s", truncate(f.Path, 128), msg)
		return false
	}
	if !okRoot {
		return false
	}
	if !c.pathAllowed(f.Root, f.Path) {
		c.add(name, "path", RulePathNotAllowed, "harness %q may not write %s:%s", c.in.Manifest.Harness, f.Root, f.Path)
		return false
	}
	return true
}

// pathAllowed applies the profile's path table.
func (c *checker) pathAllowed(root, p string) bool {
	for _, r := range c.h.paths {
		if r.match(root, p) {
			return true
		}
	}
	return false
}

func (c *checker) checkContent(name string, f abi.File) {
	if !c.checkText(name, "content", f.Content) {
		return
	}
	allow := placement{secret: f.Secret && f.Root != abi.RootCheckout, blob: true, root: true}
	if !(f.Root == c.h.config.root && f.Path == c.h.config.path) {
		allow.secret = false // a harness keeps its secrets in its config file only
	}
	secrets := c.checkPlaceholders(name, "content", f.Content, allow)
	if len(secrets) > 0 && !f.Secret {
		c.add(name, "secret", RuleSecretPlacement, "holds a secret placeholder but is not marked secret")
	}
	switch f.Format {
	case abi.FormatJSON:
		v, err := ParseJSON([]byte(f.Content))
		if err != nil {
			c.add(name, "content", RuleContent, "invalid json: %v", err)
			return
		}
		c.literalPlaceholders(name, f.Content, v.Strings())
	case abi.FormatTOML:
		t, err := ParseTOML(f.Content)
		if err != nil {
			c.add(name, "content", RuleContent, "invalid toml: %v", err)
			return
		}
		c.literalPlaceholders(name, f.Content, t.Strings())
	case abi.FormatMarkdown:
		fm, _, has, err := FrontMatter(f.Content)
		if err != nil {
			c.add(name, "content", RuleContent, "invalid markdown front matter: %v", err)
			return
		}
		if has {
			for _, o := range Scan(fm) {
				switch o.Kind {
				case KindBlob:
					c.add(name, "content", RuleBlobPlacement, "blob placeholder %s may not appear in front matter", o.Text)
				case KindSecret:
					c.add(name, "content", RuleSecretPlacement, "secret placeholder %s may not appear in front matter", o.Text)
				}
			}
		}
	case abi.FormatText:
	default:
		c.add(name, "format", RuleFormat, "format %q, want json, toml, markdown or text", truncate(f.Format, 32))
	}
}

// literalPlaceholders requires every placeholder of a parsed json/toml document to be spelled
// literally in its source: one hidden behind escapes would escape substitution and the scan.
func (c *checker) literalPlaceholders(name, src string, strs []string) {
	parsed := 0
	for _, s := range strs {
		parsed += len(Scan(s))
	}
	if raw := len(Scan(src)); raw != parsed {
		c.add(name, "content", RulePlaceholder, "%d placeholders in the source but %d in its parsed strings: placeholders must be spelled literally inside strings", raw, parsed)
	}
}

var envName = namepattern.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`, 128)

func (c *checker) checkEnv(env []abi.Pair) {
	if len(env) > c.lim.MaxEnv {
		c.add("", "env", RuleLimit, "%d env entries, at most %d allowed", len(env), c.lim.MaxEnv)
		return
	}
	seen := map[string]bool{}
	for i, e := range env {
		field := "env[" + strconv.Itoa(i) + "]"
		if !envName.MatchString(e.Name) {
			c.add("", field+".name", RuleEnv, "invalid env name %q", truncate(e.Name, 64))
		} else if seen[e.Name] {
			c.add("", field+".name", RuleEnv, "duplicate env name %s", e.Name)
		}
		seen[e.Name] = true
		if e.Secret {
			c.add("", field+".secret", RuleSecretPlacement, "the harness environment may not hold a secret")
		}
		if len(e.Value) > c.lim.MaxArgBytes {
			c.add("", field+".value", RuleLimit, "%d bytes, at most %d allowed", len(e.Value), c.lim.MaxArgBytes)
			continue
		}
		if c.checkText("", field+".value", e.Value) {
			c.checkPlaceholders("", field+".value", e.Value, placement{root: true})
		}
	}
	c.checkHarnessEnv(env)
}

func (c *checker) checkArgs(args []string) {
	if len(args) > c.lim.MaxArgs {
		c.add("", "args", RuleLimit, "%d args, at most %d allowed", len(args), c.lim.MaxArgs)
		return
	}
	for i, a := range args {
		field := "args[" + strconv.Itoa(i) + "]"
		if len(a) > c.lim.MaxArgBytes {
			c.add("", field, RuleLimit, "%d bytes, at most %d allowed", len(a), c.lim.MaxArgBytes)
			continue
		}
		if !c.checkText("", field, a) {
			continue
		}
		c.checkPlaceholders("", field, a, placement{root: true})
	}
	c.checkHarnessArgs(args)
}

func (c *checker) checkPrompt(prompt string) {
	if len(prompt) > c.lim.MaxPromptBytes {
		c.add("", "prompt", RuleLimit, "%d bytes, at most %d allowed", len(prompt), c.lim.MaxPromptBytes)
		return
	}
	if c.checkText("", "prompt", prompt) {
		c.checkPlaceholders("", "prompt", prompt, placement{root: true, blob: true})
	}
}

func (c *checker) checkGitExclude(entries []string) {
	if len(entries) > c.lim.MaxGitExclude {
		c.add("", "gitExclude", RuleLimit, "%d entries, at most %d allowed", len(entries), c.lim.MaxGitExclude)
		return
	}
	seen := map[string]bool{}
	for i, e := range entries {
		field := "gitExclude[" + strconv.Itoa(i) + "]"
		if !c.checkText("", field, e) {
			continue
		}
		c.checkPlaceholders("", field, e, placement{})
		p := strings.TrimSuffix(e, "/")
		if strings.ContainsAny(p, "*?[]!#") || strings.HasPrefix(p, " ") || strings.HasSuffix(p, " ") {
			c.add("", field, RuleGitExclude, "entry %q holds a gitignore pattern character; only plain paths are allowed", truncate(e, 64))
			continue
		}
		if msg := pathProblem(p, allowedHidden(abi.RootCheckout)); msg != "" {
			c.add("", field, RuleGitExclude, "entry %q: %s", truncate(e, 64), msg)
			continue
		}
		if !c.pathAllowed(abi.RootCheckout, p) && !c.pathAllowed(abi.RootCheckout, p+"/x") {
			c.add("", field, RuleGitExclude, "entry %q is outside what the harness may write in the checkout", truncate(e, 64))
			continue
		}
		if seen[e] {
			c.add("", field, RuleGitExclude, "duplicate entry %q", e)
		}
		seen[e] = true
	}
}

func (c *checker) checkWarnings(ws []abi.Warning) {
	if len(ws) > c.lim.MaxWarnings {
		c.add("", "warnings", RuleLimit, "%d warnings, at most %d allowed", len(ws), c.lim.MaxWarnings)
		return
	}
	for i, w := range ws {
		field := "warnings[" + strconv.Itoa(i) + "]"
		if n := len(w.Code) + len(w.Message) + len(w.Server) + len(w.Skill); n > c.lim.MaxWarningBytes {
			c.add("", field, RuleWarning, "%d bytes, at most %d allowed", n, c.lim.MaxWarningBytes)
			continue
		}
		if w.Code == "" {
			c.add("", field+".code", RuleWarning, "empty warning code")
		}
		for _, s := range []string{w.Code, w.Message, w.Server, w.Skill} {
			if c.checkText("", field, s) {
				c.checkPlaceholders("", field, s, placement{})
			}
		}
	}
}

// fold maps a path to the key under which case-insensitive file systems would confuse it.
func fold(p string) string { return strings.ToLower(strings.ToUpper(p)) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
