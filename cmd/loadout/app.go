package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/loadout-dev/loadout/host"
	"github.com/loadout-dev/loadout/host/redact"
)

// app holds what every command shares: the process's streams and environment.
type app struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string

	logLevel  string
	logFormat string
	logger    *slog.Logger
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "loadout",
		Short: "Render a capability spec into the configuration an agent CLI reads",
		Long: `loadout turns one request (the skills and MCP servers an AI coding agent may use) into the
config files, arguments and prompt an agent CLI (a harness) reads, once policy approves it.

Built-in harnesses: ` + harnessesText(builtinHarnesses()) + `.

Exit codes: 0 ok (a server or skill the policy denies is dropped and listed, not an error),
1 internal error, 2 usage error (a missing or unreadable request file too), 3 request
refused as a whole, 4 plugin failure.`,
		Example:       `  loadout init request.json && loadout render --out out/ request.json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setupLogger()
		},
	}
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "warn", "log level: debug, info, warn, error (logs go to stderr)")
	root.PersistentFlags().StringVar(&a.logFormat, "log-format", "text", "log format: text or json")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{msg: err.Error()} })
	root.AddCommand(
		a.initCommand(),
		a.renderCommand(),
		a.serveCommand(),
		a.conformityCommand(),
		a.validateCommand(),
		a.policyCommand(),
		a.redactCommand(),
		a.pluginsCommand(),
		a.versionCommand(),
	)
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	return root
}

// wrapArgs makes argument-count errors usage errors (exit 2), recursively.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return &usageError{msg: err.Error()}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

func (a *app) setupLogger() error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
		return usagef("--log-level: %q is not one of debug, info, warn, error", a.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch a.logFormat {
	case "text":
		a.logger = slog.New(slog.NewTextHandler(a.stderr, opts))
	case "json":
		a.logger = slog.New(slog.NewJSONHandler(a.stderr, opts))
	default:
		return usagef("--log-format: %q is not one of text, json", a.logFormat)
	}
	return nil
}

// printError writes err for a person: one line per joined error, prefixed "loadout: "; a
// usage error points at the help of the command that failed (cmdPath, e.g. "loadout render").
func (a *app) printError(err error, cmdPath string) {
	var ue *usageError
	msg := errorText(err)
	if errors.As(err, &ue) {
		msg += "\n(see '" + cmdPath + " --help')"
	}
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintf(a.stderr, "loadout: %s\n", line)
	}
}

// errorText is err's message with its request's secrets masked (host.RequestError carries
// them), as serve masks the errors it answers.
func errorText(err error) string {
	var re *host.RequestError
	if errors.As(err, &re) {
		return redact.New(re.Secrets).String(err.Error())
	}
	return err.Error()
}

// readInput reads a request body from a file argument or, for "-" or no argument, stdin.
// It refuses bodies larger than limit.
func (a *app) readInput(args []string, limit int64) ([]byte, error) {
	if len(args) == 1 && args[0] != "-" {
		return a.readRequestFile(args[0], limit)
	}
	return a.readInputFrom(a.stdin, "stdin", limit)
}

// readRequestFile reads the request file named on the command line. A file that is missing or
// cannot be read (a directory, no permission) is a usage error: the command line names it.
func (a *app) readRequestFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, usagef("request file: %v", err)
	}
	defer f.Close()
	data, err := a.readInputFrom(f, name, limit)
	var re *rejectedError
	if err != nil && !errors.As(err, &re) {
		return nil, usagef("request file: %v", err)
	}
	return data, err
}

// readInputFrom reads at most limit bytes of a request body from r (named name in errors).
func (a *app) readInputFrom(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, &rejectedError{fmt.Errorf("read %s: request larger than %d bytes", name, limit)}
	}
	return data, nil
}

// checkFormat validates a --format value.
func checkFormat(f string) error {
	if f != "text" && f != "json" {
		return usagef("--format: %q is not one of text, json", f)
	}
	return nil
}
