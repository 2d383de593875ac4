// Command cerulean serves the Azure Storage REST APIs.
//
//	cerulean [serve] [flags]   run the server (the default)
//	cerulean version           print the version
//	cerulean health [flags]    check that a running server answers (exit 0)
//	cerulean azurite [flags]   run with Azurite's command line (also as
//	                           azurite, azurite-blob, azurite-queue,
//	                           azurite-table through links)
//	cerulean install-links DIR make those links in DIR
//	cerulean help              list the commands (commands.go)
//
// The load generator is cmd/cerulean-bench, so that this binary does not
// link the Azure SDKs.
//
// Errors in the command line or the configuration, and failures to start
// (a port in use, an unusable data directory), exit with status 2 before
// anything listens; a server that stops on a failure exits with status 1.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	tuneGC()
	prog := "cerulean"
	if entry, ok := azuriteEntry(os.Args[0]); ok {
		prog = entry
	}
	if err := runCommand(os.Args[0], os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, prog+":", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func runCommand(argv0 string, args []string, stdout, stderr io.Writer) error {
	if entry, ok := azuriteEntry(argv0); ok {
		return azuriteMain(entry, args, stdout, stderr)
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		// No command: serve, and its --help is cerulean's whole usage.
		if wantsHelp(args) {
			return printHelp(stdout)
		}
		return serve(args, stdout, stderr)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.entry(args[1:], stdout, stderr)
		}
	}
	if args[0] == "bench" {
		return usageErr(errors.New("the load generator is a program of its own, which links the Azure SDK for Go: go run ./cmd/cerulean-bench [flags] (see docs/benchmarks.md)"))
	}
	return usageErr(fmt.Errorf("unknown command %q (want one of %s; cerulean --help lists them)", args[0], commandNames()))
}
