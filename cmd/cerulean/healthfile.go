package main

// The health file: with CERULEAN_HEALTH_FILE set (the container image
// sets it), the server writes there, once every listener is open, its
// process id and the addresses it actually listens on, whatever command
// line started it (serve, azurite, azurite-blob … with any ports, 0
// included), and removes it when it stops. `cerulean health` reads it and
// probes exactly those addresses, so a server started with --blobPort
// 29000 is checked on 29000, and another server answering on 10000 does
// not make a stopped or never-started one look healthy.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// healthFileEnv names the health file; unset or empty: none is written.
const healthFileEnv = "CERULEAN_HEALTH_FILE"

// healthState is the content of the health file.
type healthState struct {
	PID     int    `json:"pid"`
	Scheme  string `json:"scheme"`
	Account string `json:"account"`
	// Endpoints maps a REST service (blob, queue, table, file, dfs) to
	// the host:port to probe: the listener's, with a wildcard address
	// (0.0.0.0, ::) replaced by loopback (app.ClientAddr).
	Endpoints map[string]string `json:"endpoints"`
	SMB       string            `json:"smb,omitempty"`
}

// writeHealthFile writes a's state to path (atomically: a reader sees
// the old file, or none, or the whole new one) and returns a function
// removing it.
func writeHealthFile(path string, a *app.App, account string) (func(), error) {
	st := healthState{PID: os.Getpid(), Scheme: a.Scheme(), Account: account, Endpoints: map[string]string{}}
	for svc, addr := range a.Endpoints() {
		st.Endpoints[svc] = app.ClientAddr(addr)
	}
	if a.SMBAddr != "" {
		st.SMB = app.ClientAddr(a.SMBAddr)
	}
	body, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cerulean-health-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", healthFileEnv, err)
	}
	_, werr := tmp.Write(append(body, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("%s: %w", healthFileEnv, werr)
	}
	return func() {
		// Only our own file: another server may have replaced it.
		if got, err := readHealthFile(path); err == nil && got.PID == st.PID {
			os.Remove(path)
		}
	}, nil
}

// readHealthFile reads the health file at path.
func readHealthFile(path string) (healthState, error) {
	var st healthState
	body, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("%s does not exist: no server started with %s=%s is running (not started yet, stopped, or started without it)", path, healthFileEnv, path)
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(body, &st); err != nil || st.PID <= 0 {
		return st, fmt.Errorf("%s: not a health file written by cerulean", path)
	}
	return st, nil
}
