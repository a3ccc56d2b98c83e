package conformity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/exposure"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// MinCanary is the shortest dropped command, url or instructions text the runner searches the
// output for: a shorter one could appear by chance. The project's corpus keeps every such string
// at least this long (TestCorpusCanaries).
const MinCanary = 8

// runner runs one case on one target.
type runner struct {
	ctx      context.Context
	h        *host.Host
	manifest abi.Manifest
	c        corpus.Case
	tmp      string
	fails    []string
}

func (r *runner) fail(format string, args ...any) {
	r.fails = append(r.fails, fmt.Sprintf(format, args...))
}

// output is everything one run produced, read back from disk and from the result.
type output struct {
	roots    host.Roots
	files    []outFile // every regular file under the roots, sorted by root then path
	res      *host.Result
	prepared *host.Prepared
	err      error
}

type outFile struct {
	root, path string
	mode       fs.FileMode
	content    []byte
	secret     bool // the result marks it secret
}

// run runs the case (twice when it is accepted, to check determinism) and checks it; it
// returns the failures and the output digest.
func (r *runner) run() ([]string, string) {
	body, err := r.body()
	if err != nil {
		r.fail("build request body: %v", err)
		return r.fails, ""
	}
	first, err := r.once(body)
	if err != nil {
		r.fail("%v", err)
		return r.fails, ""
	}
	if r.c.Expect.Rejected {
		r.checkRejected(first)
		return r.fails, ""
	}
	if first.err != nil {
		r.fail("render: want the request accepted, got %v (class %d)", first.err, host.Classify(first.err))
		return r.fails, ""
	}
	second, err := r.once(body)
	if err != nil {
		r.fail("%v", err)
		return r.fails, ""
	}
	d1, d2 := digest(first), digest(second)
	if second.err != nil || d1 != d2 {
		r.fail("output is not deterministic: two runs of the same case differ (digest %.12s, then %.12s, second error %v)", d1, d2, second.err)
	}
	r.checkExpect(first)
	r.checkInvariants(first)
	if hf, err := formatOf(first.prepared.Profile()); err != nil {
		r.fail("format: %v", err)
	} else {
		r.checkFormat(first, hf)
	}
	return r.fails, d1
}

// body is the request body: inputRaw byte for byte, or input with context.tokens merged into its
// tokens member.
func (r *runner) body() ([]byte, error) {
	c := r.c
	if c.Input == nil || len(c.Context.Tokens) == 0 {
		return c.Body(), nil
	}
	in := bytes.TrimSpace(c.Input)
	if len(in) == 0 || in[0] != '{' {
		return c.Body(), nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(in, &members); err != nil {
		return nil, err
	}
	tokens := map[string]string{}
	if raw, ok := members["tokens"]; ok {
		if err := json.Unmarshal(raw, &tokens); err != nil {
			return nil, fmt.Errorf("input tokens: %w", err)
		}
	}
	for k, v := range c.Context.Tokens {
		tokens[k] = v
	}
	tb, err := json.Marshal(tokens) // keys sorted: deterministic
	if err != nil {
		return nil, err
	}
	if _, ok := members["tokens"]; ok {
		members["tokens"] = tb
		return json.Marshal(members)
	}
	inner := bytes.TrimSpace(in[1 : len(in)-1])
	var b bytes.Buffer
	b.WriteByte('{')
	if len(inner) > 0 {
		b.Write(inner)
		b.WriteByte(',')
	}
	b.WriteString(`"tokens":`)
	b.Write(tb)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// hostEnv is context.hostEnv exactly, ordered by name.
func (r *runner) hostEnv() []spec.Pair {
	out := make([]spec.Pair, 0, len(r.c.Context.HostEnv))
	for k, v := range r.c.Context.HostEnv {
		out = append(out, spec.Pair{Name: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// once renders the case into fresh roots and reads everything back. The error is about the
// runner's own environment; a pipeline error is output.err.
func (r *runner) once(body []byte) (*output, error) {
	parent, err := os.MkdirTemp(r.tmp, "lc-")
	if err != nil {
		return nil, fmt.Errorf("temp roots: %w", err)
	}
	defer os.RemoveAll(parent)
	roots := host.Roots{
		Config:   filepath.Join(parent, abi.RootConfig),
		Run:      filepath.Join(parent, abi.RootRun),
		Checkout: filepath.Join(parent, abi.RootCheckout),
	}
	// A checkout with a .git directory, so that git-exclude entries are written and read back.
	if err := os.MkdirAll(filepath.Join(roots.Checkout, ".git"), 0o755); err != nil {
		return nil, fmt.Errorf("temp roots: %w", err)
	}
	out := &output{roots: roots}
	rr := host.RenderRequest{Body: body, Harness: r.manifest.Harness, HostEnv: r.hostEnv(), Roots: roots}
	out.prepared, out.err = r.h.Prepare(r.ctx, rr)
	if out.err == nil {
		out.res, out.err = r.h.Execute(r.ctx, out.prepared, rr)
	}
	if err := r.readBack(parent, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readBack walks the temporary parent of the roots: every regular file becomes an outFile; a
// file outside the three roots, a symlink or any other non-regular entry is a failure.
func (r *runner) readBack(parent string, out *output) error {
	secret := map[string]bool{}
	if out.res != nil {
		for _, f := range out.res.Files {
			secret[f.Root+":"+f.Path] = f.Secret
		}
	}
	err := filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(parent, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			return nil
		}
		root, path, _ := strings.Cut(rel, "/")
		if !d.Type().IsRegular() {
			r.fail("wrote %s, which is not a regular file (%s)", rel, d.Type())
			return nil
		}
		if path == "" || (root != abi.RootConfig && root != abi.RootRun && root != abi.RootCheckout) {
			r.fail("wrote %s, outside every root", rel)
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out.files = append(out.files, outFile{root: root, path: path, mode: info.Mode().Perm(), content: b, secret: secret[root+":"+path]})
		return nil
	})
	if err != nil {
		return fmt.Errorf("read back %s: %w", parent, err)
	}
	sort.Slice(out.files, func(i, j int) bool {
		a, b := out.files[i], out.files[j]
		if a.root != b.root {
			return a.root < b.root
		}
		return a.path < b.path
	})
	return nil
}

// file returns the file at root:path, if written.
func (o *output) file(root, path string) (outFile, bool) {
	for _, f := range o.files {
		if f.root == root && f.path == path {
			return f, true
		}
	}
	return outFile{}, false
}

// normalize replaces the root directories by their names, so that two runs compare equal.
func (o *output) normalize(s string) string {
	return strings.NewReplacer(o.roots.Config, "<config>", o.roots.Run, "<run>", o.roots.Checkout, "<checkout>").Replace(s)
}

// digest hashes the whole output: every file (root, path, mode, content), args, env, prompt and
// warnings, with the roots replaced by their names.
func digest(o *output) string {
	h := sha256.New()
	put := func(parts ...string) {
		for _, p := range parts {
			fmt.Fprintf(h, "%d:%s", len(p), p)
		}
		h.Write([]byte{'\n'})
	}
	for _, f := range o.files {
		put("file", f.root, f.path, f.mode.String(), fmt.Sprint(f.secret), o.normalize(string(f.content)))
	}
	if o.res != nil {
		for _, a := range o.res.Args {
			put("arg", o.normalize(a))
		}
		for _, e := range o.res.Env {
			put("env", e.Name, o.normalize(e.Value))
		}
		put("prompt", o.normalize(o.res.Prompt))
		for _, w := range o.res.Warnings {
			put("warning", w.Code, w.Server, w.Skill, o.normalize(w.Message))
		}
	}
	if o.err != nil {
		put("error", fmt.Sprint(host.Classify(o.err)))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (r *runner) checkRejected(o *output) {
	switch {
	case o.err == nil:
		r.fail("rejected: want the request refused (exit 3), it was rendered")
	case host.Classify(o.err) != host.ClassRejected:
		r.fail("rejected: want an input rejection (exit 3), got class %d: %v", host.Classify(o.err), o.err)
	}
	for _, f := range o.files {
		r.fail("rejected: nothing may be written, found %s:%s", f.root, f.path)
	}
}

// checkExpect compares the run with the case's expect block.
func (r *runner) checkExpect(o *output) {
	e := r.c.Expect
	v := o.prepared.Vetted
	req := v.Request()
	servers := []string{}
	for _, s := range req.Servers {
		servers = append(servers, s.ID)
	}
	prof := o.prepared.Profile()
	wantServers := e.Servers
	if e.Exposure != nil && e.Exposure.NativeServers != nil && prof.ExposureNative() {
		wantServers = e.Exposure.NativeServers
	}
	if !slices.Equal(orEmpty(wantServers), servers) {
		r.fail("servers: got %q, want %q", servers, orEmpty(wantServers))
	}
	if e.Exposure != nil && !prof.ExposureNative() {
		r.checkExposure(o, e.Exposure)
	}
	skills := []string{}
	for _, sk := range req.Skills {
		skills = append(skills, sk.Name)
		paths := []string{}
		for _, res := range sk.Resources {
			paths = append(paths, res.Path)
		}
		if want := orEmpty(e.Resources[sk.Name]); !slices.Equal(want, paths) {
			r.fail("resources of skill %q: got %q, want %q", sk.Name, paths, want)
		}
	}
	if !slices.Equal(orEmpty(e.Skills), skills) {
		r.fail("skills: got %q, want %q", skills, orEmpty(e.Skills))
	}
	for name := range e.Resources {
		if !slices.Contains(skills, name) && len(e.Resources[name]) > 0 {
			r.fail("resources: want resources for skill %q, which was not kept", name)
		}
	}
	gotRedact, wantRedact := slices.Sorted(slices.Values(v.Redactions())), slices.Sorted(slices.Values(orEmpty(e.Redact)))
	if !slices.Equal(slices.Compact(gotRedact), slices.Compact(wantRedact)) {
		r.fail("redact: got %q, want %q", gotRedact, wantRedact)
	}
	for _, id := range slices.Sorted(maps.Keys(e.SpawnEnv)) {
		want := e.SpawnEnv[id]
		got := map[string]string{}
		pairs := v.SpawnEnv(id)
		for _, p := range pairs {
			got[p.Name] = p.Value
		}
		if pairs == nil || !maps.Equal(got, want) {
			r.fail("spawnEnv of %q: got %v, want %v", id, got, want)
		}
	}
	// The corpus names these two after the harness they were written for; each holds for every
	// harness whose profile shares the property: tool rules on the command line, and a TOML
	// config whose server tables are listed.
	if e.ArgToolRules.Present && prof.ToolsFlag() != "" {
		flag := prof.ToolsFlag()
		got, present := toolRules(o.res.Args, flag, prof)
		switch {
		case e.ArgToolRules.Null && present:
			r.fail("claudeMcpAllowRules: want no %s, got %q", flag, got)
		case !e.ArgToolRules.Null && !present:
			r.fail("claudeMcpAllowRules: want %s with %q, the flag is absent", flag, e.ArgToolRules.Rules)
		case !e.ArgToolRules.Null && !slices.Equal(orEmpty(e.ArgToolRules.Rules), got):
			r.fail("claudeMcpAllowRules: got %q, want %q", got, orEmpty(e.ArgToolRules.Rules))
		}
	}
	if e.TOMLServers != nil && prof.Config.Format == abi.FormatTOML {
		got := []string{}
		if f, ok := o.file(prof.Config.Root, prof.Config.Path); ok {
			ids, err := prof.ConfigServers(string(f.content))
			if err != nil {
				r.fail("codexServers: %s does not read back through the profile: %v", prof.Config.Path, err)
				return
			}
			got = ids
		}
		if !slices.Equal(e.TOMLServers, got) {
			r.fail("codexServers: got %q, want %q", got, e.TOMLServers)
		}
	}
}

// checkExposure compares the tool lists, warnings and refusals the host made of exposure, on
// a harness without exposure of its own, with the case's.
func (r *runner) checkExposure(o *output, e *corpus.Exposure) {
	v := o.prepared.Vetted
	req := v.Request()
	harness := o.prepared.Harness
	for _, id := range slices.Sorted(maps.Keys(e.Servers)) {
		want := e.Servers[id]
		i := slices.IndexFunc(req.Servers, func(s abi.Server) bool { return s.ID == id })
		if i < 0 {
			r.fail("exposure.servers: %q was not kept", id)
			continue
		}
		s := req.Servers[i]
		switch {
		case want.Allowed == nil && s.ToolsRestricted:
			r.fail("exposure.servers.%s.allowed: got %q, want the server unrestricted", id, s.AllowedTools)
		case want.Allowed != nil && (!s.ToolsRestricted || !slices.Equal(orEmpty(*want.Allowed), orEmpty(s.AllowedTools))):
			r.fail("exposure.servers.%s.allowed: got %q (restricted %t), want %q", id, s.AllowedTools, s.ToolsRestricted, *want.Allowed)
		}
		if !slices.Equal(orEmpty(want.Denied), orEmpty(s.DeniedTools)) {
			r.fail("exposure.servers.%s.denied: got %q, want %q", id, s.DeniedTools, want.Denied)
		}
		var got, wantMsgs []string
		for _, w := range v.Warnings() {
			if w.Code == exposure.CodeUnsupported && w.Server == id {
				got = append(got, w.Message)
			}
		}
		for _, u := range want.Unsupported {
			wantMsgs = append(wantMsgs, exposure.UnsupportedMessage(u, harness))
		}
		if !slices.Equal(orEmpty(wantMsgs), orEmpty(got)) {
			r.fail("exposure.servers.%s.unsupported: got warnings %q, want %q", id, got, wantMsgs)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(e.Refused)) {
		if !slices.ContainsFunc(v.Dropped(), func(d spec.Diagnostic) bool { return d.Kind == "server" && d.Name == id && d.Code == e.Refused[id] }) {
			r.fail("exposure.refused: want server %q refused with %s, dropped is %v", id, e.Refused[id], v.Dropped())
		}
	}
}

// toolRules returns the server and tool rules that follow flag (every entry but the profile's
// built-in tools), and whether the flag is there at all.
func toolRules(args []string, flag string, prof *plan.Profile) ([]string, bool) {
	i := slices.Index(args, flag)
	if flag == "" || i < 0 {
		return nil, false
	}
	rules := []string{}
	for _, a := range args[i+1:] {
		if strings.HasPrefix(a, "-") {
			break
		}
		if !slices.Contains(prof.BuiltinTools(), a) {
			rules = append(rules, a)
		}
	}
	return rules, true
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
