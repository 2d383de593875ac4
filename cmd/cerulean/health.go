package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
)

// health checks a running server the way a container's HEALTHCHECK needs
// (the image has no shell or curl): for each service endpoint it sends a
// Shared-Key-signed Get Service Properties, which reads the store. It
// exits 0 when at least one endpoint answered 200 and none answered
// anything else; an endpoint refusing connections is a service this
// server does not run (azurite-blob serves Blob only) and is skipped.
// The SMB port, unless refused, must answer an SMB2 NEGOTIATE, and with
// --metrics-port (CERULEAN_METRICS_PORT) the server's /readyz must answer
// 200 (it is 503 when the store is unreachable or the SMB listener has
// stopped accepting); these can fail the check but are no storage
// endpoint answering.
func health(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "127.0.0.1", "address of the server")
	scheme := fs.String("scheme", "http", "http, or https for a server started with a certificate (its certificate is not verified)")
	blob := fs.Int("blob-port", envInt("blob-port", 10000), "Blob port (-1 skips)")
	queue := fs.Int("queue-port", envInt("queue-port", 10001), "Queue port (-1 skips)")
	table := fs.Int("table-port", envInt("table-port", 10002), "Table port (-1 skips)")
	dfs := fs.Int("dfs-port", envInt("dfs-port", 10004), "Data Lake Storage Gen2 (dfs) port (-1 skips)")
	smbPort := fs.Int("smb-port", envInt("smb-port", 10445), "SMB port, checked with an SMB2 NEGOTIATE (0 or -1 skips)")
	metricsPort := fs.Int("metrics-port", envInt("metrics-port", 0), "metrics port: its /readyz must answer 200 (0 or -1 skips)")
	timeout := fs.Duration("timeout", 3*time.Second, "time allowed for each endpoint")
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
	name, key := accts[0].Name, base64.StdEncoding.EncodeToString(accts[0].Keys[0])
	opts := policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}
	if *scheme == "https" {
		opts.Transport = insecureClient()
	}
	blobCheck := func(ctx context.Context, url string) error {
		cred, err := azblob.NewSharedKeyCredential(name, key)
		if err != nil {
			return err
		}
		c, err := azblob.NewClientWithSharedKeyCredential(url, cred, &azblob.ClientOptions{ClientOptions: opts})
		if err != nil {
			return err
		}
		_, err = c.ServiceClient().GetProperties(ctx, nil)
		return err
	}
	checks := []healthCheck{
		{"blob", *blob, blobCheck},
		// The dfs port answers the Blob API of its accounts too.
		{"dfs", *dfs, blobCheck},
		{"queue", *queue, func(ctx context.Context, url string) error {
			cred, err := azqueue.NewSharedKeyCredential(name, key)
			if err != nil {
				return err
			}
			c, err := azqueue.NewServiceClientWithSharedKeyCredential(url, cred, &azqueue.ClientOptions{ClientOptions: opts})
			if err != nil {
				return err
			}
			_, err = c.GetServiceProperties(ctx, nil)
			return err
		}},
		{"table", *table, func(ctx context.Context, url string) error {
			cred, err := aztables.NewSharedKeyCredential(name, key)
			if err != nil {
				return err
			}
			c, err := aztables.NewServiceClientWithSharedKey(url, cred, &aztables.ClientOptions{ClientOptions: opts})
			if err != nil {
				return err
			}
			_, err = c.GetProperties(ctx, nil)
			return err
		}},
	}
	// The SMB port answers the SMB2 protocol, the metrics port says
	// whether the server is ready (store reachable, SMB listener alive).
	if *smbPort > 0 {
		checks = append(checks, healthCheck{"smb", *smbPort, func(ctx context.Context, _ string) error {
			return smbCheck(ctx, net.JoinHostPort(*host, fmt.Sprint(*smbPort)))
		}})
	}
	if *metricsPort > 0 {
		checks = append(checks, healthCheck{"readyz", *metricsPort, readyzCheck})
	}
	healthy, failed := 0, 0
	for _, c := range checks {
		if c.port < 0 {
			continue
		}
		url := fmt.Sprintf("%s://%s/%s", *scheme, net.JoinHostPort(*host, fmt.Sprint(c.port)), name)
		switch c.svc {
		case "smb":
			url = "//" + net.JoinHostPort(*host, fmt.Sprint(c.port))
		case "readyz":
			url = "http://" + net.JoinHostPort(*host, fmt.Sprint(c.port)) + "/readyz"
		}
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		err := c.check(ctx, url)
		cancel()
		switch {
		case err == nil:
			if !c.extra() {
				healthy++
			}
			fmt.Fprintf(stdout, "%s %s: ok\n", c.svc, url)
		case errors.Is(err, syscall.ECONNREFUSED):
			fmt.Fprintf(stdout, "%s %s: not served\n", c.svc, url)
		default:
			failed++
			fmt.Fprintf(stdout, "%s %s: %s\n", c.svc, url, oneLine(err))
		}
	}
	if failed > 0 || healthy == 0 {
		return fmt.Errorf("unhealthy: %d endpoints answered, %d failed", healthy, failed)
	}
	return nil
}

// healthCheck checks one endpoint of a service (url is the account URL,
// or the SMB or readiness address).
type healthCheck struct {
	svc   string
	port  int
	check func(ctx context.Context, url string) error
}

// extra reports whether c is a check (SMB, /readyz) that can fail the
// health check but does not count as a storage endpoint answering:
// another program answering on 10445 does not make a server with
// nothing else up healthy.
func (c healthCheck) extra() bool { return c.svc == "smb" || c.svc == "readyz" }

// oneLine shortens an SDK error (several lines with the response) to its
// first line, or the error code of a response error.
func oneLine(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
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
