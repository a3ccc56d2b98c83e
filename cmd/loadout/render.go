package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/plan"
)

// maxRequestBytes bounds a request body read from a file or stdin.
const maxRequestBytes = 16 << 20

func (a *app) renderCommand() *cobra.Command {
	var (
		harness     string
		dryRun      bool
		showContent bool
		promptOut   string
		format      string
		out         string
		roots       host.Roots
		ho          hostOptions
	)
	cmd := &cobra.Command{
		Use:   "render [flags] (REQUEST.json | -)",
		Short: "Vet a request and render it for one harness",
		Long: `render reads a capability request (a file, or stdin for "-"), decodes it strictly,
sanitizes it, has the policies vet it, renders it with the harness's plugin, checks the plan
and writes the files. Nothing is written, or created, unless every step succeeds (--prompt-out
is checked first too); the files are published all at once, and a render into directories an
earlier render wrote leaves exactly the new render's files there (and what the harness itself
wrote). A render killed while writing is finished (rolled forward or back) by the next render
into the same directories, before anything else. The text output lists
what was written: the servers each config file holds and the skills each directory holds, as
read back from the files, then the harness's args, env and prompt. --format json prints the
result document of docs/result.schema.json instead.

With --dry-run nothing is written and the plan is printed with secrets masked; add
--show-content to see every planned file.

Each stdio server starts with exactly its spawn environment: the variables of loadout's own
environment that the policy allowlists (PATH, HOME, LANG, LC_*, … by default), then the
server's own env, then the run's token. Run loadout in the environment the agent will run in.
See docs/SPAWN-ENV.md for how each harness is made to honour it.`,
		Example: "  loadout render --harness " + exampleHarness(builtinHarnesses()) + " --dry-run --show-content request.json\n" +
			"  loadout render --harness " + exampleHarness(builtinHarnesses()) + " --out out/ --prompt-out out/prompt.txt request.json\n" +
			"  cat request.json | loadout render --harness " + everyHarness(builtinHarnesses()) + " --out out/ -",
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("render needs a request: give REQUEST.json, or - to read it from stdin (loadout init writes a starter request)")
			case len(args) > 1:
				return usagef("render takes one request, got %d arguments: %s", len(args), strings.Join(args, " "))
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			if showContent && !dryRun {
				return usagef("--show-content shows the planned files of a dry run: add --dry-run (a real render's files are on disk)")
			}
			body, err := a.readInput(args, maxRequestBytes)
			if err != nil {
				return err
			}
			harnesses := splitHarnesses(harness)
			if len(harnesses) > 1 && (roots != host.Roots{}) {
				return usagef("--harness with several harnesses writes DIR/<harness>/…: give --out DIR, not --config-dir/--run-dir/--checkout")
			}
			if len(harnesses) > 1 && !dryRun && out == "" {
				return usagef("--harness with several harnesses writes DIR/<harness>/…: give --out DIR (or use --dry-run)")
			}
			if len(harnesses) > 1 && promptOut != "" {
				return usagef("--prompt-out writes one harness's prompt: give one --harness")
			}
			if promptOut != "" {
				if err := checkPromptTarget(promptOut); err != nil {
					return err
				}
			}
			// The roots of every render, resolved up front; what a killed render left in them
			// is finished before anything else, whatever becomes of this one.
			var rootsOf []host.Roots
			if !dryRun {
				if len(harnesses) <= 1 {
					r, err := resolveRoots(out, roots)
					if err != nil {
						return err
					}
					rootsOf = append(rootsOf, r)
				} else {
					for _, hn := range harnesses {
						r, err := resolveRoots(filepath.Join(out, hn), host.Roots{})
						if err != nil {
							return err
						}
						rootsOf = append(rootsOf, r)
					}
				}
				for _, r := range rootsOf {
					if err := host.Sweep(r); err != nil {
						return err
					}
				}
			}
			text := textOptions{showContent: showContent, promptOut: promptOut}
			wanted := wantedHarnesses(harnesses, body)
			if collectNearLimit != nil {
				// wazero keeps each loaded module's code in the Go heap; Wasmtime keeps it in
				// native memory, where the limit does not see it.
				plugins := 1
				if ho.engine == "wazero" {
					if plugins = len(wanted); plugins == 0 { // every built-in plugin is loaded
						plugins = len(builtinHarnesses())
					}
				}
				collectNearLimit(plugins)
			}
			h, err := a.openHost(cmd.Context(), ho, wanted...)
			if err != nil {
				return classify(err)
			}
			defer h.Close(context.WithoutCancel(cmd.Context()))
			if len(harnesses) <= 1 {
				rr := host.RenderRequest{Body: body, Harness: harness, DryRun: dryRun, ShowContent: dryRun, HostEnv: envPairs(a.environ)}
				if !dryRun {
					rr.Roots = rootsOf[0]
				}
				res, err := h.Render(cmd.Context(), rr)
				if err != nil {
					return classify(err)
				}
				if promptOut != "" {
					if err := writePrompt(promptOut, res.Prompt); err != nil {
						return fmt.Errorf("--prompt-out: %w", err)
					}
				}
				if format == "json" {
					return writeJSON(a.stdout, jsonResult(res, showContent))
				}
				text.profile = h.Profile(res.Harness)
				return writeResultText(a.stdout, res, text)
			}
			// Several harnesses: one Host, one render (and one all-or-nothing write) each, in
			// the order given, under DIR/<harness>; the first failure stops the rest.
			var results []*host.Result
			for i, hn := range harnesses {
				rr := host.RenderRequest{Body: body, Harness: hn, DryRun: dryRun, ShowContent: dryRun, HostEnv: envPairs(a.environ)}
				if !dryRun {
					rr.Roots = rootsOf[i]
				}
				res, err := h.Render(cmd.Context(), rr)
				if err != nil {
					return classify(fmt.Errorf("harness %s: %w", hn, err))
				}
				if format != "json" {
					text.profile = h.Profile(res.Harness)
					if err := writeResultText(a.stdout, res, text); err != nil {
						return err
					}
				}
				results = append(results, jsonResult(res, showContent))
			}
			if format == "json" {
				return writeJSON(a.stdout, results)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&harness, "harness", "", "harness to render for (built in: "+harnessesText(builtinHarnesses())+"), or several separated by commas (with --out DIR: DIR/<harness>/…); overrides the request's \"harness\"")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "stop before writing; print the plan with secrets masked")
	cmd.Flags().BoolVar(&showContent, "show-content", false, "with --dry-run: print every planned file's content, secrets masked")
	cmd.Flags().StringVar(&promptOut, "prompt-out", "", "also write the harness prompt to FILE (the text output then names the file instead of printing it)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&out, "out", "", "write under DIR/config, DIR/run and DIR/checkout (created as needed)")
	cmd.Flags().StringVar(&roots.Config, "config-dir", "", "the harness's isolated config home (instead of --out)")
	cmd.Flags().StringVar(&roots.Run, "run-dir", "", "per-run scratch directory, outside the checkout (instead of --out)")
	cmd.Flags().StringVar(&roots.Checkout, "checkout", "", "the repository checkout (instead of --out)")
	ho.addFlags(cmd.Flags())
	cmd.RegisterFlagCompletionFunc("harness", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return builtinHarnesses(), cobra.ShellCompDirectiveNoFileComp
	})
	cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// jsonResult is res as the JSON output shows it: the planned contents only when asked for.
func jsonResult(res *host.Result, showContent bool) *host.Result {
	if showContent {
		return res
	}
	out := *res
	out.Files = make([]host.FileResult, len(res.Files))
	for i, f := range res.Files {
		f.Content = ""
		out.Files[i] = f
	}
	return &out
}

// checkPromptTarget refuses a --prompt-out FILE the prompt could not be written to, before
// anything is written: its directory must exist and be writable, and FILE must not be a
// directory or other special file.
func checkPromptTarget(file string) error {
	dir := filepath.Dir(file)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return usagef("--prompt-out %s: its directory: %v", file, err)
	case !fi.IsDir():
		return usagef("--prompt-out %s: %s is not a directory", file, dir)
	case !writableDir(dir):
		return usagef("--prompt-out %s: directory %s is not writable", file, dir)
	}
	if fi, err := os.Lstat(file); err == nil && !fi.Mode().IsRegular() {
		return usagef("--prompt-out %s: is not a regular file (%s)", file, fi.Mode().Type())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return usagef("--prompt-out %s: %v", file, err)
	}
	return nil
}

// writePrompt writes the prompt to file whole: a temp file in its directory renamed over it.
func writePrompt(file, prompt string) error {
	f, err := os.CreateTemp(filepath.Dir(file), ".prompt-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(prompt); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), file)
}

// resolveRoots turns --out or the three root flags into absolute directories.
func resolveRoots(out string, r host.Roots) (host.Roots, error) {
	explicit := r.Config != "" || r.Run != "" || r.Checkout != ""
	switch {
	case out != "" && explicit:
		return r, usagef("--out and --config-dir/--run-dir/--checkout are exclusive")
	case out != "":
		// The checkout is loadout's too: the write makes it, once every check passed.
		r = host.Roots{Config: filepath.Join(out, "config"), Run: filepath.Join(out, "run"), Checkout: filepath.Join(out, "checkout"), MakeCheckout: true}
	case r.Config == "" || r.Run == "" || r.Checkout == "":
		return r, usagef("render writes files: give --out DIR, or all of --config-dir, --run-dir and --checkout (or use --dry-run)")
	}
	for _, p := range []*string{&r.Config, &r.Run, &r.Checkout} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return r, err
		}
		*p = abs
	}
	return r, nil
}

// classify maps pipeline errors to exit-code classes.
func classify(err error) error {
	switch host.Classify(err) {
	case host.ClassRejected:
		return &rejectedError{err}
	case host.ClassPlugin:
		return &pluginError{err}
	case host.ClassUsage:
		return &usageError{msg: errorText(err)}
	}
	return err
}

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// textOptions are the render flags that change the text output.
type textOptions struct {
	showContent bool   // print every planned file's content (a dry run's, secrets masked)
	promptOut   string // the prompt went to this file instead of the output
	// profile reads the harness's config back (its servers); nil: not read back.
	profile *plan.Profile
}

// writeResultText writes a render result for a person: what was kept, then what was written
// (read back from the files: the servers of each config file, the skills of each directory),
// then what the harness is started with.
func writeResultText(w io.Writer, r *host.Result, o textOptions) error {
	var b strings.Builder
	mode := "rendered"
	if r.DryRun {
		mode = "dry run, nothing written"
	}
	fmt.Fprintf(&b, "harness %s (%s)\n", r.Harness, mode)
	fmt.Fprintf(&b, "servers: %s\n", listOrNone(r.Servers))
	fmt.Fprintf(&b, "skills:  %s\n", listOrNone(r.Skills))
	fmt.Fprintf(&b, "built-in tools pre-approved: %s\n", listOrNone(r.BuiltinTools))
	for _, sr := range r.Resources {
		if len(sr.Paths) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", sr.Skill, strings.Join(sr.Paths, ", "))
		}
	}
	verb := "wrote"
	if r.DryRun {
		verb = "would write"
	}
	fmt.Fprintf(&b, "%s %d files:\n", verb, len(r.Files))
	for _, f := range r.Files {
		secret := ""
		if f.Secret {
			secret = ", secret"
		}
		fmt.Fprintf(&b, "  %s:%s (%s, %d bytes%s)\n", f.Root, f.Path, f.Mode, f.Bytes, secret)
		if f.Written != "" {
			fmt.Fprintf(&b, "    at %s\n", f.Written)
		}
		if line := configServers(o.profile, f); line != "" {
			fmt.Fprintf(&b, "    %s\n", line)
		}
		if o.showContent {
			writeIndented(&b, "    | ", f.Content)
		}
	}
	for _, d := range skillDirs(r.Files) {
		fmt.Fprintf(&b, "skills in %s: %s\n", d.where, strings.Join(d.skills, ", "))
	}
	if len(r.Args) > 0 {
		fmt.Fprintf(&b, "args: %s\n", strings.Join(quoteAll(r.Args), " "))
	}
	for _, e := range r.Env {
		fmt.Fprintf(&b, "env %s=%s\n", e.Name, e.Value)
	}
	switch {
	case o.promptOut != "":
		fmt.Fprintf(&b, "prompt: %d bytes written to %s\n", len(r.Prompt), o.promptOut)
	case r.Prompt != "":
		fmt.Fprintf(&b, "prompt:\n")
		writeIndented(&b, "  | ", r.Prompt)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "warning %s: %s\n", wn.Code, wn.Message)
	}
	for _, d := range r.Dropped {
		fmt.Fprintf(&b, "dropped %s %q at %s (%s): %s\n", d.Kind, d.Name, d.Field, d.Code, d.Message)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeIndented writes text line by line, each behind prefix.
func writeIndented(b *strings.Builder, prefix, text string) {
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			b.WriteString(strings.TrimRight(prefix, " "))
		} else {
			b.WriteString(prefix + line)
		}
		b.WriteByte('\n')
	}
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// quoteAll quotes arguments that a shell would split.
func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`") {
			out[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		} else {
			out[i] = s
		}
	}
	return out
}
