package main

// The command list (cerulean --help) and the flag listing every command's
// --help prints. A new command is one entry in commands; a new flag of
// serve is one fs.Int/fs.String call (a port through portFlag) and one
// row in README's Configuration table.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// command is one entry of cerulean's command list.
type commandEntry struct {
	name, args, summary string
	entry               func(args []string, stdout, stderr io.Writer) error
}

// commands lists every command in the order --help shows them.
func commands() []commandEntry {
	az := func(name string) func([]string, io.Writer, io.Writer) error {
		return func(args []string, stdout, stderr io.Writer) error { return azuriteMain(name, args, stdout, stderr) }
	}
	return []commandEntry{
		{"serve", "[flags]", "run the server (the default: plain `cerulean` is `cerulean serve`)", serve},
		{"azurite", "[flags]", "run with Azurite's command line: Blob, Queue and Table (also as a link named azurite)", az("azurite")},
		{"azurite-blob", "[flags]", "Azurite's command line, Blob only (also as a link named azurite-blob)", az("azurite-blob")},
		{"azurite-queue", "[flags]", "Azurite's command line, Queue only (also as a link named azurite-queue)", az("azurite-queue")},
		{"azurite-table", "[flags]", "Azurite's command line, Table only (also as a link named azurite-table)", az("azurite-table")},
		{"health", "[flags]", "exit 0 if the server on this machine answers on the ports it opened (container HEALTHCHECK)", healthCommand},
		{"compact", "[--data DIR]", "give the embedded store's disk space of deleted data back (server stopped)", compact},
		{"install-links", "DIR", "make azurite, azurite-blob, azurite-queue and azurite-table links to this binary in DIR", installLinks},
		{"version", "", "print the version", func(_ []string, stdout, _ io.Writer) error {
			fmt.Fprintln(stdout, "cerulean", version)
			return nil
		}},
		{"help", "", "print this list and the flags of serve", func(_ []string, stdout, _ io.Writer) error { return printHelp(stdout) }},
	}
}

// commandNames lists the commands for the "unknown command" error.
func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return strings.Join(names, ", ")
}

// printHelp writes cerulean's usage: the commands, one line each, then
// the flags of serve.
func printHelp(w io.Writer) error {
	fmt.Fprintln(w, "Cerulean serves the Azure Storage REST APIs (Blob, Queue, Table, File, Data Lake Storage Gen2) and SMB.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: cerulean [command] [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands() {
		width = max(width, len(strings.TrimSpace(c.name+" "+c.args)))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s  %s\n", width, strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w, "Load tests are a program of their own (it links the Azure SDK for Go): go run ./cmd/cerulean-bench --help")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "`cerulean COMMAND --help` lists a command's flags. Flags of serve (each also read from CERULEAN_<NAME>, e.g. CERULEAN_BLOB_PORT):")
	fs := serveFlags(io.Discard)
	printFlags(w, fs.FlagSet)
	return nil
}

// installLinks makes Azurite's program names links to this binary in
// dir, so `azurite-blob --blobPort 10000 …` runs Cerulean as an Azurite
// installation's would.
func installLinks(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("install-links", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: cerulean install-links DIR")
		fmt.Fprintln(stderr, "makes azurite, azurite-blob, azurite-queue and azurite-table in DIR links to this binary")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr(err)
	}
	if fs.NArg() != 1 {
		return usageErr(errors.New("install-links: want one directory, e.g. cerulean install-links ~/go/bin"))
	}
	dir := fs.Arg(0)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(azuriteEntries))
	for n := range azuriteEntries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		link := filepath.Join(dir, n)
		if target, err := os.Readlink(link); err == nil && target == self {
			fmt.Fprintf(stdout, "%s -> %s (already there)\n", link, self)
			continue
		}
		if _, err := os.Lstat(link); err == nil {
			return fmt.Errorf("install-links: %s exists and is not a link to %s; remove it first", link, self)
		}
		if err := os.Symlink(self, link); err != nil {
			return fmt.Errorf("install-links: %w", err)
		}
		fmt.Fprintf(stdout, "%s -> %s\n", link, self)
	}
	return nil
}
