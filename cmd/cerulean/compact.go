package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// compact is `cerulean compact`: give the embedded store's free pages back
// to the filesystem after large deletes (app.Compact).
func compact(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", env("data", "./cerulean-data"), "embedded data directory (env CERULEAN_DATA)")
	wait := fs.Duration("wait", 2*time.Second, "how long to wait for a server using the directory to stop")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: cerulean compact [--data DIR]")
		fmt.Fprintln(stderr, "rewrites the embedded store's meta.db without the space of deleted records; the server must be stopped")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr(err)
	}
	if fs.NArg() != 0 {
		return usageErr(fmt.Errorf("compact: unexpected argument %q", fs.Arg(0)))
	}
	st, err := app.Compact(*data, *wait)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s/meta.db: %.1f MiB -> %.1f MiB in %v\n", *data, float64(st.Before)/(1<<20), float64(st.After)/(1<<20), st.Took.Round(time.Millisecond))
	return nil
}
