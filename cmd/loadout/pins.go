package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
)

// A pins file (--pins) is one JSON object of "sha256:<hex>" pins:
//
//	{"qwen.wasm": "sha256:…", "profile:qwen": "sha256:…"}
//
// A plugin module is pinned under its file name; a harness profile under "profile:" and the
// harness it describes, so that two harnesses' profile.yaml files never share a key and a pins
// file holds one reviewed profile per harness. A profile is checked against the pins before it
// is parsed: its bytes must hash to a profile pin, and the profile must then name that pin's
// harness. An older pins file keyed a profile by its file name; such an entry is still read
// (the bytes must match it) while the harness has no "profile:" pin, and `plugins add` moves
// it to the harness's key.

// profilePinPrefix starts the pins-file key of a harness profile.
const profilePinPrefix = "profile:"

// profilePinKey is the pins-file key of the profile of harness h.
func profilePinKey(h string) string { return profilePinPrefix + h }

// loadPins reads the pins file a --pins flag names. A file that is missing, unreadable or not
// one JSON object of strings is a usage error.
func loadPins(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--pins: %v", err)
	}
	var pins map[string]string
	if err := json.Unmarshal(b, &pins); err != nil {
		return nil, usagef("--pins %s: %v", path, err)
	}
	if pins == nil {
		return nil, usagef("--pins %s: not a JSON object of pins", path)
	}
	return pins, nil
}

// verifyPinnedModule checks a --plugin file's bytes against its pin in pins (registry.Verify)
// and returns the pin. A module with no pin, or bytes that do not match it, is a usage error,
// reported before the module reaches a compiler.
func verifyPinnedModule(pins map[string]string, pinsPath, file string, wasm []byte) (string, error) {
	key := filepath.Base(file)
	pin, ok := pins[key]
	if !ok {
		return "", usagef("plugin %s is not pinned in %s: add %q: %q to it (after checking that digest against a trusted source), or run loadout plugins add", file, pinsPath, key, registry.Digest(wasm))
	}
	if err := registry.Verify(registry.Artifact{Name: file, Wasm: wasm, SHA256: pin}); err != nil {
		return "", usagef("plugin %s: %v (pins file %s)", file, err, pinsPath)
	}
	return pin, nil
}

// verifyPinnedProfile checks a --profile file's bytes against the profile pins of pins
// (registry.VerifyProfile) before it parses them, then parses them and checks that the profile
// names the harness its pin is kept under. Every failure is a usage error naming the file and
// the pins file.
func verifyPinnedProfile(pins map[string]string, pinsPath, file string, data []byte) (*plan.Profile, error) {
	digest := registry.Digest(data)
	var keys []string // the keys whose pin these bytes hash to
	for _, k := range slices.Sorted(maps.Keys(pins)) {
		if strings.HasPrefix(k, profilePinPrefix) && pins[k] == digest {
			keys = append(keys, k)
		}
	}
	legacy := filepath.Base(file) // an older pins file's key
	if pins[legacy] == digest && !strings.HasPrefix(legacy, profilePinPrefix) {
		keys = append(keys, legacy)
	}
	if len(keys) == 0 {
		return nil, usagef("profile %s is not pinned in %s: its bytes hash to %s, which is the pin of no profile there (%s); review it, then pin it with loadout plugins add PLUGIN.wasm --profile %s --pins %s",
			file, pinsPath, digest, pinnedProfiles(pins), file, pinsPath)
	}
	if err := registry.VerifyProfile(file, data, pins[keys[0]]); err != nil {
		return nil, usagef("profile %s: %v", file, err)
	}
	p, err := plan.ParseProfile(data)
	if err != nil {
		return nil, usagef("profile %s: %v", file, err)
	}
	key := profilePinKey(p.Harness)
	switch {
	case slices.Contains(keys, key):
	case !slices.Contains(keys, legacy):
		return nil, usagef("profile %s describes harness %q, but %s pins it as %s", file, p.Harness, pinsPath, strings.Join(keys, ", "))
	case pins[key] != "":
		// One reviewed profile per harness: the older entry does not stand beside the new one.
		return nil, usagef("profile %s matches the older entry %q of %s, but %q pins another profile of harness %s (%s)", file, legacy, pinsPath, key, p.Harness, pins[key])
	}
	return p, nil
}

// pinnedProfiles lists the profile pins of pins, for messages.
func pinnedProfiles(pins map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(pins)) {
		if strings.HasPrefix(k, profilePinPrefix) {
			out = append(out, k+" "+pins[k])
		}
	}
	if len(out) == 0 {
		return "it pins no profile"
	}
	return "it pins " + strings.Join(out, ", ")
}

// pinnedProfilesByHarness verifies and parses every --profile file against pins
// (verifyPinnedProfile) and returns them by harness; two files for one harness are refused.
func pinnedProfilesByHarness(pins map[string]string, pinsPath string, files []string) (plan.Profiles, error) {
	out := plan.Profiles{}
	from := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, usagef("profile: %v", err)
		}
		p, err := verifyPinnedProfile(pins, pinsPath, f, data)
		if err != nil {
			return nil, err
		}
		if prev, dup := from[p.Harness]; dup {
			return nil, usagef("profiles %s and %s both describe harness %q: give one", prev, f, p.Harness)
		}
		from[p.Harness] = f
		out[p.Harness] = p
	}
	return out, nil
}

// readPinsFile reads a pins file for writing, or returns an empty set when it does not exist.
func readPinsFile(path string) (map[string]string, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	return loadPins(path)
}
