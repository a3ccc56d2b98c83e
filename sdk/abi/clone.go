package abi

import "slices"

// Clone returns a deep copy of r: every list of r and of its servers, OAuth settings and skills
// is copied (strings are immutable), so a change to the copy never reaches r.
func (r Request) Clone() Request {
	out := r
	out.Run.BuiltinTools = slices.Clone(r.Run.BuiltinTools)
	out.Servers = make([]Server, len(r.Servers))
	for i, s := range r.Servers {
		s.Args = slices.Clone(s.Args)
		s.Env = slices.Clone(s.Env)
		s.HostEnv = slices.Clone(s.HostEnv)
		s.Headers = slices.Clone(s.Headers)
		s.AllowedTools = slices.Clone(s.AllowedTools)
		s.DeniedTools = slices.Clone(s.DeniedTools)
		s.ToolExposure = slices.Clone(s.ToolExposure)
		if s.OAuth != nil {
			o := *s.OAuth
			o.Scopes = slices.Clone(o.Scopes)
			s.OAuth = &o
		}
		out.Servers[i] = s
	}
	out.Skills = make([]Skill, len(r.Skills))
	for i, sk := range r.Skills {
		sk.Resources = slices.Clone(sk.Resources)
		out.Skills[i] = sk
	}
	return out
}
