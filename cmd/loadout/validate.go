package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
	"github.com/loadout-dev/loadout/host/spec"
	"github.com/loadout-dev/loadout/sdk/abi"
)

func (a *app) validateCommand() *cobra.Command {
	var (
		profileFile, cli, specFile, format string
		timeout                            time.Duration
		ho                                 hostOptions
	)
	cmd := &cobra.Command{
		Use:   "validate --profile P.yaml --cli PATH --spec REQUEST.json OUTDIR",
		Short: "Check with the real CLI that a render holds exactly the vetted servers",
		Long: `validate runs the offline command the harness profile declares (its validate key, such as
[CLI, mcp, list, --json]) with the real CLI at --cli in place of the command's first word,
against the render in OUTDIR (as render --out OUTDIR wrote it), and compares the servers the CLI
lists with the vetted servers of that render.

A render records no list of its vetted servers, and one kept in OUTDIR could be edited with the
config it describes, so validate vets --spec (the request OUTDIR was rendered from) again, as a
dry run on the same policies and plugin (--policies, --plugin, --pins as for render): that
gives the vetted servers and the env the render's plan sets. The CLI runs in OUTDIR/checkout with
loadout's own environment and that env, every {{loadout.root.NAME}} placeholder (in the env and in
the command's arguments) resolved to OUTDIR/NAME; the plan's args are not added (they are the
run's, and an offline list command refuses them). Run validate in the environment the agent will
run in, plus what the list command needs offline (docs/PROFILES.md §7 says what each CLI measured
needs).

The command's output is read as JSON when stdout is JSON (an array of objects with a name, or an
object with a member holding the servers: an array of objects with a name, or an object keyed by
server name), else as lines "[mark ]NAME: …" on stdout and stderr (a line starting Warning:,
Error: or another log level names no server). The lists match when every
vetted server the render had to write (enabled, and named by no warning of the plan) is listed,
every listed server is a vetted one, and none is listed twice.

With --profile pinned in --pins, the host checks the dry run through that profile too; without
--pins the profile only names the harness and the command, and the host uses its own profile of
the harness.

Exit codes: 0 the lists match, 2 usage error (no validate key, OUTDIR without the profile's config
file), 3 the request is refused, 4 the lists differ or the CLI failed (its exit status, its output
unreadable), 1 internal error.`,
		Example: `  loadout render --harness NAME --out out/ request.json
  loadout validate --profile plugins/NAME/profile.yaml --cli "$(command -v CLI)" --spec request.json out/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("validate takes one OUTDIR (the --out directory of the render), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			switch {
			case profileFile == "":
				return usagef("validate needs --profile P.yaml: the harness profile whose validate command lists the servers")
			case cli == "":
				return usagef("validate needs --cli PATH: the real CLI of the harness")
			case specFile == "":
				return usagef("validate needs --spec REQUEST.json: the request OUTDIR was rendered from")
			}
			data, err := os.ReadFile(profileFile)
			if err != nil {
				return usagef("--profile: %v", err)
			}
			prof, err := plan.ParseProfile(data)
			if err != nil {
				return usagef("--profile %s: %v", profileFile, err)
			}
			if len(prof.Validate) == 0 {
				return usagef("--profile %s: harness %q declares no validate command (docs/PROFILES.md)", profileFile, prof.Harness)
			}
			roots, err := resolveRoots(args[0], host.Roots{})
			if err != nil {
				return err
			}
			rootOf := map[string]string{abi.RootConfig: roots.Config, abi.RootRun: roots.Run, abi.RootCheckout: roots.Checkout}
			config := filepath.Join(rootOf[prof.Config.Root], filepath.FromSlash(prof.Config.Path))
			if _, err := os.Stat(config); err != nil {
				return usagef("%s holds no %s render: %v", args[0], prof.Harness, err)
			}
			body, err := a.readRequestFile(specFile, maxRequestBytes)
			if err != nil {
				return err
			}
			if ho.pins != "" {
				ho.profiles = []string{profileFile}
			}
			ctx := cmd.Context()
			h, err := a.openHost(ctx, ho, prof.Harness)
			if err != nil {
				return classify(err)
			}
			defer h.Close(context.WithoutCancel(ctx))
			vetted, err := vetForValidate(ctx, h, body, prof.Harness, envPairs(a.environ))
			if err != nil {
				return classify(err)
			}
			argv := append([]string{cli}, argsWithRoots(prof.Validate[1:], rootOf)...)
			env := slices.Clone(a.environ)
			for _, e := range vetted.env {
				env = setEnvVar(env, e.Name, withRoots(e.Value, rootOf))
			}
			dir := roots.Checkout
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				dir = args[0]
			}
			rep := validateReport{Harness: prof.Harness, Command: argv, Vetted: vetted.ids, Listed: []string{}, Missing: []string{}, Unexpected: []string{}, Duplicates: []string{}}
			listed, runErr := listServers(ctx, timeout, dir, env, argv)
			if runErr == nil {
				rep.Listed = listed
				rep.Missing, rep.Unexpected, rep.Duplicates = compareServerLists(listed, vetted.required, vetted.ids)
				rep.OK = len(rep.Missing)+len(rep.Unexpected)+len(rep.Duplicates) == 0
			} else {
				rep.Error = runErr.Error()
			}
			if format == "json" {
				if err := writeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				writeValidateText(a, rep)
			}
			switch {
			case runErr != nil:
				return &pluginError{fmt.Errorf("validate: %w", runErr)}
			case !rep.OK:
				return &pluginError{fmt.Errorf("validate: %s lists other servers than the vetted ones", filepath.Base(cli))}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&profileFile, "profile", "", "the harness profile (profile.yaml) whose validate command lists the servers; with --pins, pinned there and checked through")
	f.StringVar(&cli, "cli", "", "the real CLI of the harness, run in place of the validate command's first word")
	f.StringVar(&specFile, "spec", "", "the request OUTDIR was rendered from, vetted again to know its servers and env")
	f.DurationVar(&timeout, "timeout", 2*time.Minute, "how long the CLI may take")
	f.StringVar(&format, "format", "text", "output format: text or json")
	addPolicyFlags(f, &ho)
	f.StringArrayVar(&ho.plugins, "plugin", nil, "renderer plugin .wasm file of the harness, as given to render (pinned in --pins)")
	f.StringVar(&ho.pins, "pins", "", `JSON file {"<file name>": "sha256:<hex>"} pinning every --plugin file and --profile`)
	f.StringVar(&ho.engine, "engine", defaultEngine(), "WebAssembly engine: "+strings.Join(engineNames(), " or "))
	f.BoolVar(&ho.noCache, "no-compile-cache", false, "do not keep compiled plugin code in the user cache directory")
	return cmd
}

// vetted is what validate needs of a render: its vetted server ids in request order, those the
// render had to write, and the env its plan sets.
type vetted struct {
	ids, required []string
	env           []host.EnvVar
}

// vetForValidate vets and renders body for harness as a dry run.
func vetForValidate(ctx context.Context, h *host.Host, body []byte, harness string, hostEnv []spec.Pair) (*vetted, error) {
	rr := host.RenderRequest{Body: body, Harness: harness, DryRun: true, HostEnv: hostEnv}
	p, err := h.Prepare(ctx, rr)
	if err != nil {
		return nil, err
	}
	res, err := h.Execute(ctx, p, rr)
	if err != nil {
		return nil, err
	}
	warned := map[string]bool{}
	for _, w := range res.Warnings {
		if w.Server != "" {
			warned[w.Server] = true
		}
	}
	v := &vetted{ids: []string{}, required: []string{}, env: res.Env}
	for _, s := range p.Vetted.Request().Servers {
		v.ids = append(v.ids, s.ID)
		// The plan check lets a render leave out a disabled server, or one a warning names.
		if s.Enabled && !warned[s.ID] {
			v.required = append(v.required, s.ID)
		}
	}
	return v, nil
}

// withRoots replaces every root placeholder in s by its directory.
func withRoots(s string, rootOf map[string]string) string {
	for name, dir := range rootOf {
		s = strings.ReplaceAll(s, plan.RootPlaceholder(name), dir)
	}
	return s
}

func argsWithRoots(args []string, rootOf map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = withRoots(a, rootOf)
	}
	return out
}

// setEnvVar sets name in env, replacing every earlier entry of it.
func setEnvVar(env []string, name, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(env, name+"="+value)
}

// listServers runs argv in dir with env and returns the server names its output lists.
func listServers(ctx context.Context, timeout time.Duration, dir string, env, argv []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(ctx, argv[0], argv[1:]...)
	c.Dir, c.Env = dir, env
	c.WaitDelay = 5 * time.Second // a server the CLI started may hold its pipes
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: no answer within %s", strings.Join(argv, " "), timeout)
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s exited %d: %s", strings.Join(argv, " "), ee.ExitCode(), tailLines(stderr.String(), 5))
		}
		return nil, fmt.Errorf("run %s: %w", argv[0], err)
	}
	return parseServerList(stdout.Bytes(), stderr.Bytes())
}

// tailLines returns the last n non-empty lines of s, joined by " | ".
func tailLines(s string, n int) string {
	lines := slices.DeleteFunc(strings.Split(s, "\n"), func(l string) bool { return strings.TrimSpace(l) == "" })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// serverLine is one server of a text listing: an optional status mark, the name, a colon and
// what the CLI says of it (Gemini CLI's "✓ docs: https://… (http) - Connected", Claude Code's
// "docs: https://… - ✔ Connected").
var serverLine = regexp.MustCompile(`^\s*(?:[^\p{L}\p{N}\s]\s+)?([A-Za-z0-9][A-Za-z0-9_.-]*): \S`)

// logLevels start lines a CLI prints about itself ("Warning: MCP servers are configured but
// disabled…"), never a server.
var logLevels = []string{"debug", "error", "fatal", "hint", "info", "note", "notice", "warn", "warning"}

// parseServerList reads the server names a list command printed, in order: JSON on stdout, else
// text lines on stdout then stderr.
func parseServerList(stdout, stderr []byte) ([]string, error) {
	trimmed := bytes.TrimSpace(stdout)
	if len(trimmed) > 0 && (trimmed[0] == '[' || trimmed[0] == '{') {
		return jsonServerList(trimmed)
	}
	names := []string{}
	for _, out := range [][]byte{stdout, stderr} {
		for _, line := range strings.Split(string(out), "\n") {
			if m := serverLine.FindStringSubmatch(line); m != nil && !slices.Contains(logLevels, strings.ToLower(m[1])) {
				names = append(names, m[1])
			}
		}
	}
	return names, nil
}

// jsonServerList reads an array of objects with a name, or an object with one member (its key
// naming servers, when several qualify) holding such an array or an object keyed by name.
func jsonServerList(doc []byte) ([]string, error) {
	var arr []map[string]json.RawMessage
	if json.Unmarshal(doc, &arr) == nil {
		return namedEntries(arr)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, fmt.Errorf("read the server list: %w", err)
	}
	var found [][]string
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if names, ok := serverMember(obj[k]); ok {
			found = append(found, names)
			keys = append(keys, k)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		var pick []int
		for i, k := range keys {
			if tableName(k) {
				pick = append(pick, i)
			}
		}
		if len(pick) == 1 {
			return found[pick[0]], nil
		}
		return nil, fmt.Errorf("read the server list: several members could be it: %s", strings.Join(keys, ", "))
	}
	return nil, errors.New("read the server list: no member of the JSON object lists servers")
}

// serverMember reads v as an array of objects with a name, or an object of objects (keyed by
// name, in document order).
func serverMember(v json.RawMessage) ([]string, bool) {
	var arr []map[string]json.RawMessage
	if json.Unmarshal(v, &arr) == nil {
		names, err := namedEntries(arr)
		return names, err == nil && len(arr) > 0
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	names := []string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var entry map[string]json.RawMessage
		if err := dec.Decode(&entry); err != nil {
			return nil, false
		}
		names = append(names, t.(string))
	}
	return names, len(names) > 0
}

func namedEntries(arr []map[string]json.RawMessage) ([]string, error) {
	names := []string{}
	for i, e := range arr {
		var name string
		if err := json.Unmarshal(e["name"], &name); err != nil || name == "" {
			return nil, fmt.Errorf("read the server list: entry %d has no name", i)
		}
		names = append(names, name)
	}
	return names, nil
}

// compareServerLists compares the servers a CLI listed with the vetted ones: missing are the
// required ones it does not list, unexpected the listed ones that are not vetted, duplicates
// the ones it lists more than once; each in the order of its list.
func compareServerLists(listed, required, vetted []string) (missing, unexpected, duplicates []string) {
	missing, unexpected, duplicates = []string{}, []string{}, []string{}
	for _, id := range required {
		if !slices.Contains(listed, id) {
			missing = append(missing, id)
		}
	}
	seen := map[string]bool{}
	for _, name := range listed {
		if seen[name] && !slices.Contains(duplicates, name) {
			duplicates = append(duplicates, name)
		}
		seen[name] = true
		if !slices.Contains(vetted, name) && !slices.Contains(unexpected, name) {
			unexpected = append(unexpected, name)
		}
	}
	return missing, unexpected, duplicates
}

// validateReport is validate's result; --format json prints it.
type validateReport struct {
	OK      bool     `json:"ok"`
	Harness string   `json:"harness"`
	Command []string `json:"command"`
	// Vetted are the vetted servers of the render, Listed the ones the CLI listed.
	Vetted     []string `json:"vetted"`
	Listed     []string `json:"listed"`
	Missing    []string `json:"missing"`
	Unexpected []string `json:"unexpected"`
	Duplicates []string `json:"duplicates"`
	// Error is why the CLI gave no list (exit status, timeout, unreadable output).
	Error string `json:"error,omitempty"`
}

func writeValidateText(a *app, r validateReport) {
	list := func(s []string) string {
		if len(s) == 0 {
			return "(none)"
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(a.stdout, "harness %s: %s\n", r.Harness, strings.Join(r.Command, " "))
	fmt.Fprintf(a.stdout, "vetted:  %s\n", list(r.Vetted))
	if r.Error != "" {
		fmt.Fprintf(a.stdout, "no list: %s\n", r.Error)
		return
	}
	fmt.Fprintf(a.stdout, "listed:  %s\n", list(r.Listed))
	if r.OK {
		fmt.Fprintln(a.stdout, "match")
		return
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(a.stdout, "missing: %s (vetted, not listed)\n", list(r.Missing))
	}
	if len(r.Unexpected) > 0 {
		fmt.Fprintf(a.stdout, "unexpected: %s (listed, not vetted)\n", list(r.Unexpected))
	}
	if len(r.Duplicates) > 0 {
		fmt.Fprintf(a.stdout, "duplicates: %s (listed more than once)\n", list(r.Duplicates))
	}
}

// tableName reports whether a member's name says it holds servers ("mcpServers", "servers").
func tableName(key string) bool {
	return strings.Contains(strings.ToLower(key), "servers")
}
