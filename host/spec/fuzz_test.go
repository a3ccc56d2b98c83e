package spec_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loadout-dev/loadout/conformity/corpus"
	"github.com/loadout-dev/loadout/host/spec"
)

// FuzzParse checks that Parse never panics, that a refusal is always a *RejectError with a
// code, and that sanitizing is idempotent: the sanitized skills, resources and server ids,
// encoded again as a request, parse to the same values.
func FuzzParse(f *testing.F) {
	cases, err := corpus.Load(*casesDir)
	if err != nil {
		f.Fatalf("corpus.Load(%q): %v", *casesDir, err)
	}
	for _, c := range cases {
		f.Add(c.Body())
	}
	f.Add([]byte(benchRequest))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, diags, err := spec.Parse(body)
		if err != nil {
			re, ok := err.(*spec.RejectError)
			if !ok || re.Code == "" {
				t.Fatalf("Parse(%q) error = %#v, want a *RejectError with a code", body, err)
			}
			if req != nil || diags != nil {
				t.Fatalf("Parse(%q) returned a request or diagnostics with its refusal %v", body, err)
			}
			return
		}
		if req == nil || diags == nil {
			t.Fatalf("Parse(%q) = %v, %v, nil: want a request and diagnostics", body, req, diags)
		}
		again := reencode(t, req)
		req2, _, err := spec.Parse(again)
		if err != nil {
			t.Fatalf("Parse(re-encoded %q) of Parse(%q): %v", again, body, err)
		}
		if got, want := skillsNoIndex(req2.Skills), skillsNoIndex(req.Skills); !equalJSON(t, got, want) {
			t.Fatalf("sanitizing is not idempotent for %q:\nfirst:  %+v\nsecond: %+v", body, want, got)
		}
		if got, want := serverIDs(req2), serverIDs(req); !equalJSON(t, got, want) {
			t.Fatalf("server ids are not idempotent for %q:\nfirst:  %q\nsecond: %q", body, want, got)
		}
	})
}

// reencode writes the sanitized skills and the structural server fields back in request form,
// a user server in userServers without its id prefix.
func reencode(t *testing.T, req *spec.Request) []byte {
	type resource struct {
		RelPath string `json:"relPath"`
		Content string `json:"content"`
	}
	type skill struct {
		Name         string     `json:"name"`
		Description  string     `json:"description"`
		Instructions string     `json:"instructions"`
		Resources    []resource `json:"resources"`
	}
	type server struct {
		ID        string  `json:"id"`
		Transport string  `json:"transport"`
		Command   *string `json:"command,omitempty"`
		URL       *string `json:"url,omitempty"`
	}
	in := struct {
		Skills      []skill  `json:"skills"`
		Servers     []server `json:"mcpServers"`
		UserServers []server `json:"userServers"`
	}{Skills: []skill{}, Servers: []server{}, UserServers: []server{}}
	for _, sk := range req.Skills {
		s := skill{Name: sk.Name, Description: sk.Description, Instructions: sk.Instructions, Resources: []resource{}}
		for _, r := range sk.Resources {
			s.Resources = append(s.Resources, resource(r))
		}
		in.Skills = append(in.Skills, s)
	}
	for _, s := range req.Servers {
		out := server{ID: s.ID, Transport: s.Transport}
		if s.Transport == spec.TransportHTTP {
			out.URL = &s.URL
		} else {
			out.Command = &s.Command
		}
		if s.Source == spec.SourceUser {
			out.ID = strings.TrimPrefix(s.ID, spec.UserIDPrefix)
			in.UserServers = append(in.UserServers, out)
			continue
		}
		in.Servers = append(in.Servers, out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("json.Marshal of the sanitized request: %v", err)
	}
	return b
}

func skillsNoIndex(skills []spec.Skill) []spec.Skill {
	out := make([]spec.Skill, len(skills))
	for i, s := range skills {
		s.Index = 0
		out[i] = s
	}
	return out
}

func serverIDs(req *spec.Request) []string {
	ids := make([]string, len(req.Servers))
	for i, s := range req.Servers {
		ids[i] = s.Source + " " + s.ID
	}
	return ids
}

func equalJSON(t *testing.T, a, b any) bool {
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	return string(ja) == string(jb)
}
