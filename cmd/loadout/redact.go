package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/redact"
)

func (a *app) redactCommand() *cobra.Command {
	var policies string
	cmd := &cobra.Command{
		Use:   "redact [--policies DIR] REQUEST.json",
		Short: "Copy stdin to stdout with every secret of a request masked",
		Long: `redact reads REQUEST.json, has the policies say which of its values are secrets, then
copies stdin to stdout with every secret masked as [REDACTED] — raw, JSON-escaped and
TOML-escaped spellings alike, also when a secret is split across reads. Pipe a harness's
logs through it:

  claude -p … 2>&1 | loadout redact request.json > run.log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			body, err := a.readInputFrom(f, args[0], maxRequestBytes)
			f.Close()
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
			p, err := h.Vet(cmd.Context(), body, envPairs(a.environ), "")
			if err != nil {
				return classify(err)
			}
			_, err = redact.New(redact.WithCredentials(p.Vetted.Redactions())).Copy(a.stdout, a.stdin)
			return err
		},
	}
	cmd.Flags().StringVar(&policies, "policies", "", "policy directory (default: the embedded policies)")
	return cmd
}
