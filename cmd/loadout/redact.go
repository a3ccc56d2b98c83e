package main

import (
	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
)

func (a *app) redactCommand() *cobra.Command {
	var policies string
	cmd := &cobra.Command{
		Use:   "redact [--policies DIR] REQUEST.json",
		Short: "Copy stdin to stdout with every secret of a request masked",
		Long: `redact reads REQUEST.json, has the policies say which of its values are secrets, then
copies stdin to stdout with every secret masked as [REDACTED] — raw, as each harness spells
it, JSON-, TOML- and Go-quoted, and a Bearer (Basic, Token, Bot) credential without its
scheme alike, also when a secret is split across reads. A value marked secret
is masked whether or not it is rendered: those of dropped servers and removed entries too. Pipe a harness's
logs through it:

  AGENT-CLI … 2>&1 | loadout redact request.json > run.log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := a.readRequestFile(args[0], maxRequestBytes)
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
			_, err = p.Vetted.Redactor().Copy(a.stdout, a.stdin)
			return err
		},
	}
	cmd.Flags().StringVar(&policies, "policies", "", "policy directory laid over the embedded default policies (default: the defaults alone)")
	return cmd
}
