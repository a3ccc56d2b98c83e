package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
)

// maxRequestBytes bounds a request body read from a file or stdin.
const maxRequestBytes = 16 << 20

func (a *app) renderCommand() *cobra.Command {
	var (
		harness string
		dryRun  bool
		format  string
		out     string
		roots   host.Roots
		ho      hostOptions
	)
	cmd := &cobra.Command{
		Use:   "render [flags] [REQUEST.json | -]",
		Short: "Vet a request and render it for one harness",
		Long: `render reads a capability request (a file, or stdin for "-" or no argument), decodes it
strictly, sanitizes it, has the policies vet it, renders it with the harness's plugin,
checks the plan and writes the files. Nothing is written unless every step succeeds.

With --dry-run nothing is written and the plan is printed with secrets masked.

Each stdio server starts with exactly its spawn environment: the variables of loadout's own
environment that the policy allowlists (PATH, HOME, LANG, LC_*, … by default), then the
server's own env, then the run's token. Run loadout in the environment the agent will run in.
See docs/SPAWN-ENV.md for how each harness is made to honour it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
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
			h, err := a.openHost(cmd.Context(), ho, wantedHarnesses(harnesses, body)...)
			if err != nil {
				return classify(err)
			}
			defer h.Close(context.WithoutCancel(cmd.Context()))
			if len(harnesses) <= 1 {
				rr := host.RenderRequest{Body: body, Harness: harness, DryRun: dryRun, HostEnv: envPairs(a.environ)}
				if !dryRun {
					if rr.Roots, err = resolveRoots(out, roots); err != nil {
						return err
					}
				}
				res, err := h.Render(cmd.Context(), rr)
				if err != nil {
					return classify(err)
				}
				if format == "json" {
					return writeJSON(a.stdout, res)
				}
				return writeResultText(a.stdout, res)
			}
			// Several harnesses: one Host, one render (and one all-or-nothing write) each, in
			// the order given, under DIR/<harness>; the first failure stops the rest.
			var results []*host.Result
			for _, hn := range harnesses {
				rr := host.RenderRequest{Body: body, Harness: hn, DryRun: dryRun, HostEnv: envPairs(a.environ)}
				if !dryRun {
					if rr.Roots, err = resolveRoots(filepath.Join(out, hn), host.Roots{}); err != nil {
						return err
					}
				}
				res, err := h.Render(cmd.Context(), rr)
				if err != nil {
					return classify(fmt.Errorf("harness %s: %w", hn, err))
				}
				if format != "json" {
					if err := writeResultText(a.stdout, res); err != nil {
						return err
					}
				}
				results = append(results, res)
			}
			if format == "json" {
				return writeJSON(a.stdout, results)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&harness, "harness", "", "harness to render for (claude, codex, pi, …), or several separated by commas (with --out DIR: DIR/<harness>/…); overrides the request's \"harness\"")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "stop before writing; print the plan with secrets masked")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().StringVar(&out, "out", "", "write under DIR/config, DIR/run and DIR/checkout (created as needed)")
	cmd.Flags().StringVar(&roots.Config, "config-dir", "", "the harness's isolated config home (instead of --out)")
	cmd.Flags().StringVar(&roots.Run, "run-dir", "", "per-run scratch directory, outside the checkout (instead of --out)")
	cmd.Flags().StringVar(&roots.Checkout, "checkout", "", "the repository checkout (instead of --out)")
	ho.addFlags(cmd.Flags())
	return cmd
}

// resolveRoots turns --out or the three root flags into absolute directories.
func resolveRoots(out string, r host.Roots) (host.Roots, error) {
	explicit := r.Config != "" || r.Run != "" || r.Checkout != ""
	switch {
	case out != "" && explicit:
		return r, usagef("--out and --config-dir/--run-dir/--checkout are exclusive")
	case out != "":
		r = host.Roots{Config: filepath.Join(out, "config"), Run: filepath.Join(out, "run"), Checkout: filepath.Join(out, "checkout")}
		if err := os.MkdirAll(r.Checkout, 0o755); err != nil {
			return r, err
		}
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
		return &usageError{msg: err.Error()}
	}
	return err
}

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeResultText writes a render result for a person.
func writeResultText(w io.Writer, r *host.Result) error {
	var b strings.Builder
	mode := "rendered"
	if r.DryRun {
		mode = "dry run"
	}
	fmt.Fprintf(&b, "harness %s (%s)\n", r.Harness, mode)
	fmt.Fprintf(&b, "servers: %s\n", listOrNone(r.Servers))
	fmt.Fprintf(&b, "skills:  %s\n", listOrNone(r.Skills))
	for _, sr := range r.Resources {
		if len(sr.Paths) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", sr.Skill, strings.Join(sr.Paths, ", "))
		}
	}
	for _, f := range r.Files {
		secret := ""
		if f.Secret {
			secret = " secret"
		}
		where := f.Root + ":" + f.Path
		if f.Written != "" {
			where = f.Written
		}
		fmt.Fprintf(&b, "file %s %s %d bytes%s\n", f.Mode, where, f.Bytes, secret)
	}
	if len(r.Args) > 0 {
		fmt.Fprintf(&b, "args: %s\n", strings.Join(quoteAll(r.Args), " "))
	}
	for _, e := range r.Env {
		fmt.Fprintf(&b, "env %s=%s\n", e.Name, e.Value)
	}
	if r.Prompt != "" {
		fmt.Fprintf(&b, "prompt: %d bytes\n", len(r.Prompt))
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
