package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/cerulean-storage/cerulean/internal/auth"
)

// health checks a running server the way a container's HEALTHCHECK needs
// (the image has no shell or curl): for each service endpoint it sends a
// Shared-Key-signed Get Service Properties, which reads the store.
//
// With a health file (--file, default $CERULEAN_HEALTH_FILE, which the
// image sets), it checks the server that wrote it: that process must be
// running and every endpoint it opened must answer (see healthfile.go).
// Without one it probes the ports of its flags (default 10000-10004) and
// exits 0 when at least one endpoint answered 200 and none answered
// anything else; an endpoint refusing connections is a service this
// server does not run (azurite-blob serves Blob only) and is skipped.
func healthCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if wantsHelp(args) {
		fs.SetOutput(stdout)
	}
	file := fs.String("file", os.Getenv(healthFileEnv), "health file the server wrote ("+healthFileEnv+" when it started): check that server's own ports; the port flags are then not used (env "+healthFileEnv+")")
	host := fs.String("host", "127.0.0.1", "address of the server (without --file)")
	scheme := fs.String("scheme", "http", "http, or https for a server started with a certificate (its certificate is not verified) (without --file)")
	blob := fs.Int("blob-port", envInt("blob-port", 10000), "Blob port, -1 skips (without --file)")
	queue := fs.Int("queue-port", envInt("queue-port", 10001), "Queue port, -1 skips (without --file)")
	table := fs.Int("table-port", envInt("table-port", 10002), "Table port, -1 skips (without --file)")
	dfs := fs.Int("dfs-port", envInt("dfs-port", 10004), "Data Lake Storage Gen2 (dfs) port, -1 skips (without --file)")
	smbPort := fs.Int("smb-port", envInt("smb-port", 10445), "SMB port, checked with an SMB2 NEGOTIATE; -1 skips (without --file)")
	metricsPort := fs.Int("metrics-port", envInt("metrics-port", -1), "metrics port: its /readyz must answer 200; -1 skips (env CERULEAN_METRICS_PORT)")
	timeout := fs.Duration("timeout", 3*time.Second, "time allowed for each endpoint")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cerulean health [flags]")
		printFlags(fs.Output(), fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageErr(err)
	}
	if *scheme != "http" && *scheme != "https" {
		return usageErr(fmt.Errorf("--scheme %q: want http or https", *scheme))
	}
	accts, _, err := accountsFromEnv(env("accounts", ""))
	if err != nil {
		return err
	}
	acct := accts[0]
	// targets: service → host:port; strict: every target must answer.
	targets := map[string]string{}
	strict := false
	smbAddr := ""
	if *file != "" {
		st, err := readHealthFile(*file)
		if err != nil {
			return fmt.Errorf("unhealthy: %w", err)
		}
		if !processAlive(st.PID) {
			return fmt.Errorf("unhealthy: the server that wrote %s (process %d) is not running", *file, st.PID)
		}
		targets, *scheme, strict, smbAddr = st.Endpoints, st.Scheme, true, st.SMB
		for _, a := range accts {
			if a.Name == st.Account {
				acct = a
			}
		}
		if len(targets) == 0 && smbAddr == "" {
			return fmt.Errorf("unhealthy: %s lists no endpoint", *file)
		}
	} else {
		for svc, port := range map[string]int{"blob": *blob, "dfs": *dfs, "queue": *queue, "table": *table} {
			if port >= 0 {
				targets[svc] = net.JoinHostPort(*host, fmt.Sprint(port))
			}
		}
		if *smbPort > 0 {
			smbAddr = net.JoinHostPort(*host, fmt.Sprint(*smbPort))
		}
	}
	name := acct.Name
	client := &http.Client{}
	if *scheme == "https" {
		client = insecureClient()
	}
	signed := func(svc auth.Service) func(ctx context.Context, url string) error {
		return func(ctx context.Context, url string) error {
			return getServiceProperties(ctx, client, url, svc, acct)
		}
	}
	checks := map[string]func(ctx context.Context, url string) error{
		"blob": signed(auth.Blob),
		// The dfs port answers the Blob API of its accounts too.
		"dfs":   signed(auth.Blob),
		"queue": signed(auth.Queue),
		"table": signed(auth.Table),
	}
	// Services without a signed check (file) and SMB: the port accepts.
	dial := func(ctx context.Context, addr string) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	healthy, failed := 0, 0
	// report counts an endpoint's answer; extra checks (SMB, /readyz) can
	// fail the check but do not count as a storage endpoint answering:
	// another program answering on 10445 does not make a server with
	// nothing else up healthy.
	report := func(what string, extra bool, err error) {
		switch {
		case err == nil:
			if !extra {
				healthy++
			}
			fmt.Fprintf(stdout, "%s: ok\n", what)
		case !strict && errors.Is(err, syscall.ECONNREFUSED):
			fmt.Fprintf(stdout, "%s: not served\n", what)
		default:
			failed++
			fmt.Fprintf(stdout, "%s: %s\n", what, oneLine(err))
		}
	}
	for _, svc := range []string{"blob", "dfs", "queue", "table", "file"} {
		addr, ok := targets[svc]
		if !ok {
			continue
		}
		url := fmt.Sprintf("%s://%s/%s", *scheme, addr, name)
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		if check, ok := checks[svc]; ok {
			report(svc+" "+url, false, check(ctx, url))
		} else {
			report(svc+" "+addr, false, dial(ctx, addr))
		}
		cancel()
	}
	// The SMB port must answer the SMB2 protocol (a stopped accept loop
	// still completes TCP handshakes from the backlog), and the metrics
	// port says whether the server is ready (store reachable, SMB
	// listener alive).
	if smbAddr != "" {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		report("smb "+smbAddr, len(targets) > 0, smbCheck(ctx, smbAddr))
		cancel()
	}
	if *metricsPort > 0 {
		url := "http://" + net.JoinHostPort(*host, fmt.Sprint(*metricsPort)) + "/readyz"
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		report("readyz "+url, true, readyzCheck(ctx, url))
		cancel()
	}
	if failed > 0 || healthy == 0 {
		return fmt.Errorf("unhealthy: %d endpoints answered, %d failed", healthy, failed)
	}
	return nil
}

// responseError is a service's answer other than 200.
type responseError struct {
	status int
	code   string
}

func (e *responseError) Error() string { return fmt.Sprintf("%d %s", e.status, e.code) }

// getServiceProperties sends Get Service Properties for svc to the account
// URL url (scheme://host:port/account), signed with the account's first
// key (Shared Key, as the SDKs sign it), and wants 200. A plain signed
// request rather than the Azure SDK keeps the SDKs out of the server's
// binary.
func getServiceProperties(ctx context.Context, client *http.Client, url string, svc auth.Service, acct auth.Account) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/?restype=service&comp=properties", nil)
	if err != nil {
		return err
	}
	req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	req.Header.Set("x-ms-version", "2021-12-02")
	if svc == auth.Table {
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	}
	mac := hmac.New(sha256.New, acct.Keys[0])
	mac.Write([]byte(auth.StringToSign(req, svc, auth.SharedKey, acct.Name, auth.CultureOrder)))
	req.Header.Set("Authorization", "SharedKey "+acct.Name+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &responseError{resp.StatusCode, resp.Header.Get("x-ms-error-code")}
	}
	return nil
}

// oneLine shortens an error to its first line.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// insecureClient is an HTTP client that does not verify the server's
// certificate: the health check talks to its own server over loopback,
// often with a self-signed certificate.
func insecureClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // checking our own server
	return &http.Client{Transport: tr}
}
