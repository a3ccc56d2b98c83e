package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/policy"
)

func (a *app) policyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Evaluate and test the Rego policies",
	}
	cmd.AddCommand(a.policyEvalCommand(), a.policyTestCommand())
	return cmd
}

func (a *app) policyEvalCommand() *cobra.Command {
	var policies, format string
	cmd := &cobra.Command{
		Use:   "eval [--policies DIR] [REQUEST.json | -]",
		Short: "Print the policy decision for a request, with what was dropped and why",
		Long: `eval parses a request, evaluates the policies over it (data.loadout.decision) and prints
the decision document, the surviving servers and skills, and every dropped entry with its
reason code. The host environment is loadout's own. Exit 3 when the request is refused.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			body, err := a.readInput(args, maxRequestBytes)
			if err != nil {
				return err
			}
			ho := hostOptions{policies: policies}
			pfs, err := ho.policyFS()
			if err != nil {
				return err
			}
			h, err := host.New(cmd.Context(), host.Config{Policies: pfs, Logger: a.logger})
			if err != nil {
				return err
			}
			p, err := h.Vet(cmd.Context(), body, envPairs(a.environ))
			if err != nil {
				return classify(err)
			}
			areq := p.Vetted.Request()
			out := struct {
				Decision any      `json:"decision"`
				Servers  []string `json:"servers"`
				Skills   []string `json:"skills"`
				Dropped  any      `json:"dropped"`
			}{Decision: p.Vetted.Decision().Raw(), Servers: []string{}, Skills: []string{}}
			for _, s := range areq.Servers {
				out.Servers = append(out.Servers, s.ID)
			}
			for _, s := range areq.Skills {
				out.Skills = append(out.Skills, s.Name)
			}
			dropped := append(p.Diags, p.Vetted.Dropped()...)
			out.Dropped = dropped
			if format == "json" {
				return writeJSON(a.stdout, out)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "servers: %s\nskills:  %s\n", listOrNone(out.Servers), listOrNone(out.Skills))
			for _, d := range dropped {
				fmt.Fprintf(&b, "dropped %s %q at %s (%s): %s\n", d.Kind, d.Name, d.Field, d.Code, d.Message)
			}
			b.WriteString("decision:\n")
			if _, err := a.stdout.Write([]byte(b.String())); err != nil {
				return err
			}
			return writeJSON(a.stdout, out.Decision)
		},
	}
	cmd.Flags().StringVar(&policies, "policies", "", "policy directory (default: the embedded policies)")
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

func (a *app) policyTestCommand() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "test [DIR]",
		Short: "Run the policies' Rego tests (*_test.rego) through the embedded OPA",
		Long: `test runs every *_test.rego of DIR (default: the embedded policies) with the same OPA
version, capabilities and strictness loadout decides with, and reports as 'opa test' does.
Exit 3 when a test fails or errors, 1 when the policies do not compile.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			var ho hostOptions
			if len(args) == 1 {
				ho.policies = args[0]
			}
			pfs, err := ho.policyFS()
			if err != nil {
				return err
			}
			rep, err := policy.RunTests(cmd.Context(), pfs)
			if err != nil {
				return err
			}
			if format == "json" {
				if err := writeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				var b strings.Builder
				for _, r := range rep.Results {
					status := "PASS"
					switch {
					case r.Skip:
						status = "SKIP"
					case r.Error != "":
						status = "ERROR"
					case !r.Pass:
						status = "FAIL"
					}
					if status != "PASS" || len(rep.Results) < 2000 {
						fmt.Fprintf(&b, "%-5s %s.%s (%s)\n", status, r.Package, r.Name, r.Location)
					}
					if r.Error != "" {
						fmt.Fprintf(&b, "      %s\n", r.Error)
					}
					for _, f := range r.Failed {
						fmt.Fprintf(&b, "      failed: %s\n", f)
					}
				}
				fmt.Fprintf(&b, "%d tests: %d passed, %d failed, %d errored\n", len(rep.Results), countPass(rep), rep.Failed, rep.Errored)
				if _, err := a.stdout.Write([]byte(b.String())); err != nil {
					return err
				}
			}
			if len(rep.Results) == 0 {
				return &rejectedError{fmt.Errorf("policy test: no tests found")}
			}
			if rep.Failed > 0 || rep.Errored > 0 {
				return &rejectedError{fmt.Errorf("policy test: %d failed, %d errored", rep.Failed, rep.Errored)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	return cmd
}

// countPass counts the tests that passed (Report.Passed counts data-driven sub-cases too).
func countPass(rep policy.Report) int {
	n := 0
	for _, r := range rep.Results {
		if r.Pass && !r.Skip {
			n++
		}
	}
	return n
}
