package wire

import (
	"net"
	"net/url"
	"strings"
)

// SourcePath returns the path of a copy source URL (x-ms-copy-source) in
// path-style form, "/{account}/…", and whether the URL names the account
// in its host the way Azure addresses it:
// https://{account}.{service}.core.windows.net/…. Clients such as the az
// CLI build copy sources that way from the account name even when they
// talk to a custom endpoint; the account so named is taken as this
// server's account of that name (as Azurite does for blobs).
func SourcePath(u *url.URL, service string) (path string, azureHost bool) {
	host := strings.ToLower(u.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	acct, ok := strings.CutSuffix(host, "."+service+".core.windows.net")
	if ok && acct != "" && !strings.Contains(acct, ".") {
		return "/" + acct + u.Path, true
	}
	return u.Path, false
}
