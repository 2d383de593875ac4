// Command cerulean-bench load-tests a Cerulean (or any Azure Storage)
// endpoint with the Azure SDK for Go: see internal/bench and
// docs/benchmarks.md. Without -url it starts an in-process server.
//
// It is a program of its own, not a command of cerulean, so that the
// server's binary does not link the Azure SDKs (and, through azblob, the
// Apache Arrow library).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/cerulean-storage/cerulean/internal/bench"
)

func main() {
	if err := bench.Main(os.Args[1:], os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "cerulean-bench:", err)
		os.Exit(1)
	}
}
