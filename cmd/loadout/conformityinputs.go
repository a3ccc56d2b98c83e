package main

import (
	"os"
	"path/filepath"

	"github.com/loadout-dev/loadout/conformity"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/registry"
)

// conformityCorpus returns what conformity runs: without --cases the corpus built into the
// binary (conformity.Embedded), so that a run needs no checkout; else each --cases directory.
// The known divergences are the --exceptions file when given (exceptionsSet), else the
// corpus's own: the embedded exceptions.txt, or exceptions.txt beside the first --cases
// directory when there is one.
func conformityCorpus(caseDirs []string, exceptions string, exceptionsSet bool) ([]conformity.Corpus, []conformity.Exception, error) {
	var corpora []conformity.Corpus
	var ex []conformity.Exception
	if len(caseDirs) == 0 {
		cp, embeddedEx, err := conformity.Embedded()
		if err != nil {
			return nil, nil, err
		}
		corpora, ex = []conformity.Corpus{cp}, embeddedEx
	}
	for _, d := range caseDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, nil, usagef("--cases: %s is not a directory of case files", d)
		}
	}
	file := exceptions
	if !exceptionsSet {
		if len(caseDirs) == 0 {
			return corpora, ex, nil
		}
		file = filepath.Join(filepath.Dir(filepath.Clean(caseDirs[0])), "exceptions.txt")
		if _, err := os.Stat(file); err != nil {
			return corpora, nil, nil
		}
	}
	if file == "" {
		return corpora, nil, nil
	}
	ex, err := conformity.LoadExceptions(file)
	if err != nil {
		return nil, nil, err
	}
	return corpora, ex, nil
}

// conformityInputs reads the plugins and profiles conformity certifies: each --plugin file (or
// the built-in plugins, conformityArtifacts) and each --profile file by harness. With --pins
// (pinsPath) every --plugin and --profile file is checked against the pins file before anything
// is compiled or run (verifyPinnedModule, verifyPinnedProfile): a file it does not pin, or
// whose bytes do not match its pin, is a usage error. Without, a module is pinned to the bytes
// read here, which the report prints.
func conformityInputs(plugins, profileFiles []string, pinsPath string) ([]registry.Artifact, plan.Profiles, error) {
	arts, err := conformityArtifacts(plugins)
	if err != nil {
		return nil, nil, err
	}
	if pinsPath == "" {
		profiles, err := unpinnedProfiles(profileFiles)
		return arts, profiles, err
	}
	if len(plugins) == 0 && len(profileFiles) == 0 {
		return nil, nil, usagef("--pins pins the --plugin and --profile files, and none is given")
	}
	pins, err := loadPins(pinsPath)
	if err != nil {
		return nil, nil, err
	}
	for i, f := range plugins { // arts[i] is read from plugins[i]
		if arts[i].SHA256, err = verifyPinnedModule(pins, pinsPath, f, arts[i].Wasm); err != nil {
			return nil, nil, err
		}
	}
	profiles, err := pinnedProfilesByHarness(pins, pinsPath, profileFiles)
	return arts, profiles, err
}

// unpinnedProfiles parses each --profile file of a run without --pins, by harness; two files
// for one harness are refused.
func unpinnedProfiles(files []string) (plan.Profiles, error) {
	out := plan.Profiles{}
	from := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, usagef("profile: %v", err)
		}
		p, err := plan.ParseProfile(data)
		if err != nil {
			return nil, usagef("--profile %s: %v", f, err)
		}
		if prev, dup := from[p.Harness]; dup {
			return nil, usagef("profiles %s and %s both describe harness %q: give one", prev, f, p.Harness)
		}
		from[p.Harness] = f
		out[p.Harness] = p
	}
	return out, nil
}
