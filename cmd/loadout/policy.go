package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/policy"
	"github.com/loadout-dev/loadout/host/redact"
	"github.com/loadout-dev/loadout/host/spec"
)

func (a *app) policyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Show the policy input, evaluate and test the Rego policies",
	}
	cmd.AddCommand(a.policyInputCommand(), a.policyEvalCommand(), a.policyTestCommand(), a.policyCheckCommand(), a.policyCapabilitiesCommand())
	return cmd
}

// policyFlags are the flags of policy input and eval: where the policies come from and which
// harness the decision is for.
type policyFlags struct {
	host    hostOptions
	harness string
	format  string
}

func (f *policyFlags) add(fs *pflag.FlagSet) {
	addPolicyFlags(fs, &f.host)
	fs.StringVar(&f.harness, "harness", "", "harness the decision is for (default: the request's)")
	fs.StringVar(&f.format, "format", "text", "output format: text or json")
}

// policyHost is a Host with the policies of f and no plugin.
func (a *app) policyHost(ctx context.Context, f *policyFlags) (*host.Host, error) {
	cfg, err := f.host.policyConfig(a.logger)
	if err != nil {
		return nil, err
	}
	cfg.Logger = a.logger
	pe, err := policy.New(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return host.New(ctx, host.Config{Policy: pe, Logger: a.logger})
}

func (a *app) policyInputCommand() *cobra.Command {
	var f policyFlags
	cmd := &cobra.Command{
		Use:   "input [--harness NAME] [REQUEST.json | -]",
		Short: "Print the input document the policies see for a request (secrets masked)",
		Long: `input parses a request as render does and prints the input document every policy rule
reads (docs/POLICIES.md §1): the request's servers and skills, one object each, with the
facts Go reads out of their values. The values of secretKeys entries, of stored tokens, of
every entry the policy declares a secret and of every credential it drops as secret are
printed as "[REDACTED]" (every env and header value, when the policy refuses the request), and
a secret copied into any other value is masked there as loadout redact masks it; the policy
itself receives them. Save the output as a test fixture to write a rule against a real request.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := a.readInput(args, maxRequestBytes)
			if err != nil {
				return err
			}
			h, err := a.policyHost(cmd.Context(), &f)
			if err != nil {
				return err
			}
			req, _, err := spec.Parse(body)
			if err != nil {
				return classify(err)
			}
			env := envPairs(a.environ)
			// The policy's own secrets, and the credentials it drops as secret, are masked
			// too when it decides. A policy that refuses the request still gets its input
			// printed, with every env and header value masked: which of them the rules
			// would call a secret is unknown.
			// Any other string that holds a secret spelling (an arg, a url) is masked with the
			// model of loadout redact.
			var masked []policy.SecretRef
			var secrets []string
			if d, err := h.Policy().Decide(cmd.Context(), req, env, f.harness); err == nil {
				masked, secrets = d.MaskedRefs(), policy.KnownRedactions(req, d)
			} else {
				masked, secrets = everyEntry(req), policy.KnownRedactions(req, nil)
			}
			doc, err := h.Policy().InputDocument(req, env, f.harness, masked)
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, maskStrings(doc, redact.New(secrets)))
		},
	}
	f.add(cmd.Flags())
	_ = cmd.Flags().MarkHidden("format")
	return cmd
}

func (a *app) policyEvalCommand() *cobra.Command {
	var f policyFlags
	cmd := &cobra.Command{
		Use:   "eval [--policies DIR|BUNDLE] [--harness NAME] [REQUEST.json | -]",
		Short: "Print the policy decision for a request, with what was dropped, why, and by which rule",
		Long: `eval parses a request, evaluates every rule under data.loadout over it (deny, drop,
secret, warn, spawn_env in any package) and prints the surviving servers and skills, every
dropped entry with its code, message and the rule that decided it (file:row), the warnings,
and what each rule produced. It first lists every policy source in force: the embedded
defaults, and the --policies directory or bundle laid over them (or replacing them, with
--replace-default-policies). The host environment is loadout's own. Exit 3 when the request
is refused.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(f.format); err != nil {
				return err
			}
			body, err := a.readInput(args, maxRequestBytes)
			if err != nil {
				return err
			}
			h, err := a.policyHost(cmd.Context(), &f)
			if err != nil {
				return err
			}
			p, err := h.Vet(cmd.Context(), body, envPairs(a.environ), f.harness)
			if err != nil {
				return classify(err)
			}
			areq := p.Vetted.Request()
			d := p.Vetted.Decision()
			out := struct {
				Sources  []policy.Source     `json:"sources"`
				Servers  []string            `json:"servers"`
				Skills   []string            `json:"skills"`
				Dropped  []spec.Diagnostic   `json:"dropped"`
				Warnings []policy.Warning    `json:"warnings"`
				SpawnEnv policy.SpawnEnv     `json:"spawnEnv"`
				Rules    []policy.RuleOutput `json:"rules"`
			}{Servers: []string{}, Skills: []string{}, Warnings: d.Warnings, SpawnEnv: d.SpawnEnv, Rules: maskRules(d.Document, p.Vetted.Redactor()), Sources: h.Policy().Sources()}
			for _, s := range areq.Servers {
				out.Servers = append(out.Servers, s.ID)
			}
			for _, s := range areq.Skills {
				out.Skills = append(out.Skills, s.Name)
			}
			out.Dropped = append(append([]spec.Diagnostic{}, p.Diags...), p.Vetted.Dropped()...)
			if f.format == "json" {
				return writeJSON(a.stdout, out)
			}
			var b strings.Builder
			b.WriteString("policy sources:\n")
			for _, src := range out.Sources {
				fmt.Fprintf(&b, "  %s\n", src)
			}
			fmt.Fprintf(&b, "servers: %s\nskills:  %s\n", listOrNone(out.Servers), listOrNone(out.Skills))
			for _, d := range out.Dropped {
				fmt.Fprintf(&b, "dropped %s %q at %s (%s): %s", d.Kind, d.Name, d.Field, d.Code, d.Message)
				if d.Rule != "" {
					fmt.Fprintf(&b, " [%s]", d.Rule)
				}
				b.WriteString("\n")
			}
			for _, w := range out.Warnings {
				about := "run"
				switch {
				case w.Server != "":
					about = "server " + w.Server
				case w.Skill != "":
					about = "skill " + w.Skill
				}
				fmt.Fprintf(&b, "warning %s (%s): %s [%s]\n", about, w.Code, w.Message, w.Rule)
			}
			fmt.Fprintf(&b, "spawn env: keys %s; prefixes %s\n", listOrNone(out.SpawnEnv.Keys), listOrNone(out.SpawnEnv.Prefixes))
			b.WriteString("rules:\n")
			for _, r := range out.Rules {
				fmt.Fprintf(&b, "  %s: %d\n", r.Rule, len(r.Elements))
			}
			_, err = a.stdout.Write([]byte(b.String()))
			return err
		},
	}
	f.add(cmd.Flags())
	return cmd
}

// everyEntry names every env and header entry of req's servers.
func everyEntry(req *spec.Request) []policy.SecretRef {
	var out []policy.SecretRef
	for i, s := range req.Servers {
		for _, p := range s.Env {
			out = append(out, policy.SecretRef{Server: i, Field: "env", Key: p.Name})
		}
		for _, p := range s.Headers {
			out = append(out, policy.SecretRef{Server: i, Field: "headers", Key: p.Name})
		}
	}
	return out
}

// maskRules is doc with every secret spelling masked in its string values by the request's
// redactor (a rule may copy a secret into its message).
func maskRules(doc []policy.RuleOutput, r *redact.Redactor) []policy.RuleOutput {
	out := make([]policy.RuleOutput, len(doc))
	for i, ro := range doc {
		out[i] = policy.RuleOutput{Rule: ro.Rule, Elements: maskStrings(ro.Elements, r).([]any)}
	}
	return out
}

// maskStrings is v, a JSON value, with every secret spelling masked by r in its strings
// (member names are left as they are).
func maskStrings(v any, r *redact.Redactor) any {
	switch v := v.(type) {
	case string:
		return r.String(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = maskStrings(e, r)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = maskStrings(e, r)
		}
		return out
	}
	return v
}

func (a *app) policyTestCommand() *cobra.Command {
	var (
		format   string
		opts     policy.TestOptions
		coverage bool
	)
	cmd := &cobra.Command{
		Use:   "test [DIR] [--run REGEX] [--timeout D] [--coverage] [-v]",
		Short: "Run the policies' Rego tests (*_test.rego) with OPA's tester",
		Long: `test runs every *_test.rego of DIR (default: the embedded policies) with OPA's own
tester, at the OPA version, capabilities and strictness loadout decides with, and reports as
'opa test' does. DIR is laid over the embedded defaults' rules and data, as render lays it
(--replace-default-policies: DIR alone); only DIR's tests run. --run keeps the tests whose package.name matches REGEX, --timeout bounds each
test, --coverage prints OPA's coverage report, -v the expression each failed test failed at.
Exit 3 when a test fails or errors, 1 when the
policies do not compile.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			ho := hostOptions{replaceDefaults: opts.ReplaceDefaults}
			if len(args) == 1 {
				ho.policies = args[0]
			}
			if ho.replaceDefaults && ho.policies == "" {
				return usagef("--replace-default-policies: give the DIR that replaces the defaults")
			}
			pfs, err := ho.policyFS()
			if err != nil {
				return err
			}
			opts.Name = ho.policies
			opts.Coverage = coverage
			rep, err := policy.RunTests(cmd.Context(), pfs, opts)
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
					fmt.Fprintf(&b, "%-5s %s.%s (%s) %s\n", status, r.Package, r.Name, r.Location, r.Duration.Round(time.Microsecond))
					if r.Error != "" {
						fmt.Fprintf(&b, "      %s\n", r.Error)
					}
					for _, f := range r.Failed {
						fmt.Fprintf(&b, "      failed: %s\n", f)
					}
					for _, f := range r.FailedAt {
						fmt.Fprintf(&b, "      failed at %s\n", f)
					}
				}
				fmt.Fprintf(&b, "%d tests: %d passed, %d failed, %d errored\n", len(rep.Results), countPass(rep), rep.Failed, rep.Errored)
				if rep.Coverage != nil {
					files := make([]string, 0, len(rep.Coverage.Files))
					for f := range rep.Coverage.Files {
						files = append(files, f)
					}
					sort.Strings(files)
					for _, f := range files {
						fmt.Fprintf(&b, "coverage %6.2f%% %s\n", rep.Coverage.Files[f].Coverage, f)
					}
					fmt.Fprintf(&b, "coverage %6.2f%% total\n", rep.Coverage.Coverage)
				}
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
	cmd.Flags().StringVar(&opts.Run, "run", "", "run only the tests whose package.name matches this regular expression")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", policy.DefaultTestTimeout, "time limit of each test")
	cmd.Flags().BoolVar(&coverage, "coverage", false, "report OPA's test coverage")
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "show the expression each failed test failed at (file:row), as opa test -v")
	cmd.Flags().BoolVar(&opts.ReplaceDefaults, "replace-default-policies", false, "test DIR alone, without the embedded default policies underneath")
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

func (a *app) policyCheckCommand() *cobra.Command {
	var ho hostOptions
	cmd := &cobra.Command{
		Use:   "check [DIR] [--replace-default-policies]",
		Short: "Check a policy directory as loadout loads it, and as opa check --strict does",
		Long: `check runs loadout's load checks on DIR laid over the embedded defaults (as render
does; --replace-default-policies: DIR alone): compile, rule names and packages, the tunables
against their schemas (tunables/<area>/schema.jsonschema), every reference to a tunable, a
decision on a plain request; then OPA's strict compile of every module, tests included, with
loadout's capabilities, which is what 'opa check --strict --capabilities' reports with the
file 'loadout policy capabilities' prints. Exit 3 when a check fails, naming file:row.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				ho.policies = args[0]
			}
			if ho.replaceDefaults && ho.policies == "" {
				return usagef("--replace-default-policies: give the DIR that replaces the defaults")
			}
			pfs, err := ho.policyFS()
			if err != nil {
				return err
			}
			if err := policy.Check(cmd.Context(), pfs, ho.policies, ho.replaceDefaults); err != nil {
				return &rejectedError{err}
			}
			_, err = fmt.Fprintln(a.stdout, "policy check: ok")
			return err
		},
	}
	addReplaceFlag(cmd.Flags(), &ho)
	return cmd
}

func (a *app) policyCapabilitiesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "capabilities",
		Short: "Print the OPA capabilities loadout compiles policies with (for opa check --capabilities)",
		Long: `capabilities prints, as OPA's capabilities JSON, the built-ins and features a loadout
policy may use: this OPA version's, minus every built-in that reaches the network or reads
the clock, entropy or the runtime. 'opa check --strict --capabilities FILE' then refuses what
loadout refuses.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return writeJSON(a.stdout, policy.Capabilities())
		},
	}
}
