// Package plugins holds the reviewed harness profiles of the built-in renderers
// (<name>/profile.yaml, docs/PROFILES.md). Each is embedded in the binary and pinned with its
// plugin: the host checks a built-in plugin's plans through the profile of its harness.
package plugins

import "embed"

// Profiles holds <name>/profile.yaml for every built-in renderer. Read-only, safe for
// concurrent use.
//
//go:embed */profile.yaml
var Profiles embed.FS
