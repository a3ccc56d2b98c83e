package conformity

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/sdk/abi"
)

// place is one piece of output the invariants search, and whether a secret may be in it.
type place struct {
	where    string
	text     string
	secretOK bool
}

// places lists every piece of output: file paths and contents, args, env, prompt, warnings.
// Only a file the result marks secret, outside the checkout, may hold a secret.
func (o *output) places() []place {
	var ps []place
	for _, f := range o.files {
		name := f.root + ":" + f.path
		ps = append(ps, place{where: "path of " + name, text: f.path})
		ps = append(ps, place{where: name, text: string(f.content), secretOK: f.secret && f.root != abi.RootCheckout})
	}
	if o.res != nil {
		for i, a := range o.res.Args {
			ps = append(ps, place{where: "args[" + strconv.Itoa(i) + "]", text: a})
		}
		for _, e := range o.res.Env {
			ps = append(ps, place{where: "env " + e.Name, text: e.Name + "=" + e.Value})
		}
		ps = append(ps, place{where: "prompt", text: o.res.Prompt})
		for i, w := range o.res.Warnings {
			ps = append(ps, place{where: "warnings[" + strconv.Itoa(i) + "]", text: w.Code + "\n" + w.Message + "\n" + w.Server + "\n" + w.Skill})
		}
	}
	return ps
}

// checkInvariants checks what must hold for any plugin, without knowing its format.
func (r *runner) checkInvariants(o *output) {
	v := o.prepared.Vetted
	req := v.Request()
	ps := o.places()
	found := func(s string) string {
		for _, p := range ps {
			if strings.Contains(p.text, s) {
				return p.where
			}
		}
		return ""
	}

	// Dropped servers' commands and urls, dropped skills' instructions and resources: nowhere.
	kept := vettedStrings(v, r.c.Context.HostEnv)
	for _, canary := range r.canaries() {
		if len(canary) < MinCanary || slices.ContainsFunc(kept, func(k string) bool { return strings.Contains(k, canary) }) {
			continue
		}
		if w := found(canary); w != "" {
			r.fail("invariant: %q, from a dropped server or skill, appears in %s", truncate(canary, 48), w)
		}
	}
	// Kept servers and skills: somewhere.
	for _, s := range req.Servers {
		if found(s.ID) == "" {
			r.fail("invariant: kept server %q appears nowhere in the output", s.ID)
		}
	}
	for _, sk := range req.Skills {
		if found(sk.Name) == "" {
			r.fail("invariant: kept skill %q appears nowhere in the output", sk.Name)
		}
	}
	// Redaction strings: only inside secret files.
	for _, red := range v.Redactions() {
		for _, p := range ps {
			if !p.secretOK && strings.Contains(p.text, red) {
				r.fail("invariant: redaction string %q appears in %s, which may not hold a secret", truncate(red, 24), p.where)
			}
		}
	}
	// Paths: local, under a declared root, as the result reports them.
	for _, f := range o.files {
		if !slices.Contains(r.manifest.Roots, f.root) {
			r.fail("invariant: wrote %s:%s under a root the manifest does not declare (%q)", f.root, f.path, r.manifest.Roots)
		}
		if !filepath.IsLocal(filepath.FromSlash(f.path)) {
			r.fail("invariant: wrote %s:%s, which is not a local path", f.root, f.path)
		}
	}
	for _, rf := range o.res.Files {
		if !filepath.IsLocal(filepath.FromSlash(rf.Path)) || !slices.Contains(r.manifest.Roots, rf.Root) {
			r.fail("invariant: result file %s:%s is not a local path under a declared root", rf.Root, rf.Path)
		}
		dir := map[string]string{abi.RootConfig: o.roots.Config, abi.RootRun: o.roots.Run, abi.RootCheckout: o.roots.Checkout}[rf.Root]
		if rf.Written != filepath.Join(dir, filepath.FromSlash(rf.Path)) {
			r.fail("invariant: result file %s:%s was written to %s", rf.Root, rf.Path, rf.Written)
		}
		if _, ok := o.file(rf.Root, rf.Path); !ok {
			r.fail("invariant: result file %s:%s is not on disk", rf.Root, rf.Path)
		}
	}
	// Unsupported transports: a warning names the server.
	for _, s := range req.Servers {
		if slices.Contains(r.manifest.Transports, s.Transport) {
			continue
		}
		if !slices.ContainsFunc(o.res.Warnings, func(w host.Warning) bool { return w.Server == s.ID }) {
			r.fail("invariant: server %q uses transport %q, which the manifest does not list, and no warning names it", s.ID, s.Transport)
		}
	}
}

// canaries are the strings of the case's input a dropped entry would carry: every server's
// command and url (its URLMarker) and OAuth client id and metadata URL (catalog and user
// servers), every skill's instructions and every resource's content (the caller skips the ones
// a kept entry carries).
func (r *runner) canaries() []string {
	var in struct {
		Servers     []json.RawMessage `json:"mcpServers"`
		UserServers []json.RawMessage `json:"userServers"`
		Skills      []json.RawMessage `json:"skills"`
	}
	if err := json.Unmarshal(r.c.Body(), &in); err != nil {
		return nil
	}
	var out []string
	get := func(raw json.RawMessage, key string) string {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		var s string
		_ = json.Unmarshal(m[key], &s)
		return s
	}
	str := func(raw json.RawMessage, key string) {
		if s := get(raw, key); s != "" {
			out = append(out, s)
		}
	}
	for _, s := range append(in.Servers, in.UserServers...) {
		str(s, "command")
		if u := URLMarker(get(s, "url")); u != "" {
			out = append(out, u)
		}
		var o struct {
			OAuth json.RawMessage `json:"oauth"`
		}
		if json.Unmarshal(s, &o) == nil && len(o.OAuth) > 0 {
			str(o.OAuth, "clientId")
			if u := URLMarker(get(o.OAuth, "authServerMetadataUrl")); u != "" {
				out = append(out, u)
			}
		}
	}
	for _, sk := range in.Skills {
		str(sk, "instructions")
		var res struct {
			Resources []json.RawMessage `json:"resources"`
		}
		if json.Unmarshal(sk, &res) == nil {
			for _, r := range res.Resources {
				str(r, "content")
			}
		}
	}
	return out
}

// vettedStrings lists every string the vetted request carries, with secrets and content by
// reference filled in, plus the host environment: the output may hold any of them.
func vettedStrings(v *policy.Vetted, hostEnv map[string]string) []string {
	fill := fillFunc(v)
	req := v.Request()
	var out []string
	add := func(ss ...string) {
		for _, s := range ss {
			out = append(out, fill(s))
		}
	}
	pairs := func(ps []abi.Pair) {
		for _, p := range ps {
			add(p.Name, p.Value)
		}
	}
	for _, s := range req.Servers {
		add(s.ID, s.Command, s.URL, s.Cwd, s.Description, s.Exposure)
		add(s.Args...)
		add(s.AllowedTools...)
		pairs(s.Env)
		pairs(s.HostEnv)
		pairs(s.Headers)
		pairs(s.ToolExposure)
		if s.OAuth != nil {
			add(s.OAuth.ClientID, s.OAuth.AuthServerMetadataURL)
			add(s.OAuth.Scopes...)
		}
	}
	for _, sk := range req.Skills {
		add(sk.Name, sk.Description, sk.Instructions)
		for _, res := range sk.Resources {
			add(res.Path, res.Content)
		}
	}
	for k, val := range hostEnv {
		add(k, val)
	}
	return out
}

// fillFunc returns a function replacing the secret and blob placeholders of v by their values.
func fillFunc(v *policy.Vetted) func(string) string {
	var pairs []string
	for _, s := range v.Secrets() {
		pairs = append(pairs, s.Placeholder, s.Value)
	}
	for _, b := range v.Blobs() {
		pairs = append(pairs, b.Placeholder, b.Content)
	}
	rep := strings.NewReplacer(pairs...)
	return func(s string) string {
		if !strings.Contains(s, abi.PlaceholderPrefix) {
			return s
		}
		return rep.Replace(s)
	}
}

// URLMarker is what identifies a url in output: the url without its scheme and the slashes
// after it. "https://" starts every url a harness writes, a legitimate one as much as a
// leaked one, so a dropped server's url is searched for by what follows: a leak is then found
// whatever scheme it is written with, and a url that is nothing but a scheme ("https://") has
// nothing to search for.
func URLMarker(u string) string {
	i := strings.IndexByte(u, ':')
	if i <= 0 {
		return u
	}
	for j := 0; j < i; j++ {
		c := u[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return u
		}
	}
	return strings.TrimLeft(u[i+1:], "/")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
