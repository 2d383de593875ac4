// What every command reads: the environment (CERULEAN_<NAME>), the
// usage error that exits with status 2, the help printed for a flag set,
// and the build's version.

package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/auth"
)

// usageError is an error in the command line or the configuration, or a
// failure to start: the process exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }

func (e usageError) Unwrap() error { return e.err }

func usageErr(err error) error { return usageError{err} }

// env returns CERULEAN_<NAME> or def.
func env(name, def string) string {
	if v, ok := os.LookupEnv("CERULEAN_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	v := env(name, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cerulean: CERULEAN_%s=%q is not a number; using %d\n", strings.ToUpper(strings.ReplaceAll(name, "-", "_")), v, def)
		return def
	}
	return n
}

// portRule is how every port flag reads its value: -1 turns the
// listener off, 0 asks for any free port (the listening log line names
// the port chosen).
const portRule = "-1: off, 0: any free port"

// envName is the environment variable of a serve flag.
func envName(flagName string) string {
	return "CERULEAN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// accountsFromEnv returns the accounts to serve: flag (--accounts or
// CERULEAN_ACCOUNTS), else AZURITE_ACCOUNTS (Azurite's variable, same
// form: name:key1[:key2];…), else the dev account; and the key to show in
// the logged connection string.
func accountsFromEnv(flagValue string) ([]auth.Account, string, error) {
	spec, from := flagValue, "--accounts"
	if spec == "" {
		spec, from = os.Getenv("AZURITE_ACCOUNTS"), "AZURITE_ACCOUNTS"
	}
	if strings.TrimSpace(spec) == "" {
		return app.DevAccounts(), app.DevKey, nil
	}
	accts, err := app.ParseAccounts(spec)
	if err != nil {
		return nil, "", usageErr(fmt.Errorf("%s: %w", from, err))
	}
	return accts, "<key>", nil
}

// envDuration returns CERULEAN_<NAME> as a Go duration, or def (with a
// warning when it does not parse).
func envDuration(name string, def time.Duration) time.Duration {
	v := env(name, "")
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cerulean: %s=%q is not a duration; using %s\n", envName(name), v, def)
		return def
	}
	return d
}

// wantsHelp reports whether args ask for help (-h, -help, --help).
func wantsHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		switch a {
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printFlags writes the flags of fs, one entry per setting: aliases (two
// names bound to one variable, as Azurite's -l and --location) share an
// entry, and a default is printed once: not when the usage text already
// says it, nor when it is the type's zero value.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	type entry struct {
		names []string
		fl    *flag.Flag
	}
	var entries []*entry
	byValue := map[flag.Value]*entry{}
	fs.VisitAll(func(fl *flag.Flag) {
		if e, ok := byValue[fl.Value]; ok {
			e.names = append(e.names, fl.Name)
			return
		}
		e := &entry{names: []string{fl.Name}, fl: fl}
		byValue[fl.Value] = e
		entries = append(entries, e)
	})
	for _, e := range entries {
		sort.Slice(e.names, func(i, j int) bool { return len(e.names[i]) < len(e.names[j]) })
		dashed := make([]string, len(e.names))
		for i, n := range e.names {
			if len(n) == 1 {
				dashed[i] = "-" + n
			} else {
				dashed[i] = "--" + n
			}
		}
		typ, usage := flag.UnquoteUsage(e.fl)
		line := "  " + strings.Join(dashed, ", ")
		if typ != "" {
			line += " " + typ
		}
		fmt.Fprintln(w, line)
		if def := e.fl.DefValue; def != "" && def != "0" && def != "false" && !strings.Contains(usage, "default") {
			if typ == "string" {
				def = fmt.Sprintf("%q", def)
			}
			usage += " (default " + def + ")"
		}
		fmt.Fprintln(w, "    \t"+strings.ReplaceAll(usage, "\n", "\n    \t"))
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"
