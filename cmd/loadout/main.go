// Command loadout renders a capability spec (skills and MCP servers) into the configuration an
// agent CLI reads, after Rego policies have vetted it, with each harness's renderer a sandboxed
// WebAssembly plugin.
//
// main is the only place that reads the process environment and calls os.Exit.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	collectNearLimit = func(plugins int) { collectOnlyNearLimit(os.Getenv, plugins) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ())
	stop()
	os.Exit(code)
}

// run executes one command line and returns the process exit code (see exitCode).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, environ: environ}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		help := "loadout"
		if cmd != nil {
			help = cmd.CommandPath()
		}
		a.printError(err, help)
	}
	return exitCode(err)
}
