package main

import (
	"encoding/json"
	"fmt"
	"io"
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
	)
	cmd := &cobra.Command{
		Use:   "render [flags] [REQUEST.json | -]",
		Short: "Vet a request and render it for one harness",
		Long: `render reads a capability request (a file, or stdin for "-" or no argument), decodes it
strictly, sanitizes it, has the policies vet it, renders it with the harness's plugin,
checks the plan and writes the files. Nothing is written unless every step succeeds.

With --dry-run nothing is written and the plan is printed with secrets masked.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			body, err := a.readInput(args, maxRequestBytes)
			if err != nil {
				return err
			}
			res, err := host.Render(cmd.Context(), host.RenderRequest{
				Body:    body,
				Harness: harness,
				DryRun:  dryRun,
			})
			if err != nil {
				return classify(err)
			}
			if format == "json" {
				return writeJSON(a.stdout, res)
			}
			return writeResultText(a.stdout, res)
		},
	}
	cmd.Flags().StringVar(&harness, "harness", "", "harness to render for (claude, codex, pi, …); overrides the request's \"harness\"")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "stop before writing; print the plan with secrets masked")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
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
