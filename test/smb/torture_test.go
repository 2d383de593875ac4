package smb

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// tortureSuites are the smbtorture (Samba 4.17) runs and the tests of
// each that must pass; the others may fail (a knownfail list, as Samba
// keeps one) and are logged. The reasons for the known failures:
//
//   - No ACLs: create.aclfile/acldir/nulldacl, the delete-on-close-perms
//     "Existing" cases, maximum_allowed, and setinfo (which also needs
//     EAs and allocation sizes beyond the end of file); no EAs
//     (getinfo.qfile_buffercheck; getinfo.getinfo_access also wants an
//     EA listing); no streams (getinfo.complex and normalized,
//     create.gentest and quota-fake-file, compound-padding, fileid); no
//     8.3 names (dir.one and getinfo.getinfo_access ask for one); no
//     allocation sizes beyond the end of file (create.blob).
//   - create.gentest also wants FILE_NO_EA_KNOWLEDGE (0x80) refused with
//     STATUS_NOT_SUPPORTED.
//   - timestamps: no delayed write-time updates (Windows updates the
//     write time of a written file later, at close, flush, set end of
//     file or set basic information: delayed-write-vs-seteof, -vs-flush,
//     -vs-setbasic, delayed-2write); test_close_not_attrib uses "/" as a
//     path separator, which only smbd accepts.
//   - smb2.lock replay_broken_windows and replay_smb3_specification_durable
//     need resilient and durable handles (FSCTL_LMR_REQUEST_RESILIENCY, a
//     durable open with a batch oplock), which the server does not offer;
//     rw-none (W2K8 only), replay_smb3_specification_multi (multichannel)
//     and ctdb-delrec-deadlock skip. smbd passes 22, skips 3.
//   - smb2.compound related1/related2/invalid2/interim2 crash smbtorture
//     itself against a server without encryption (smbXcli_session_
//     shallow_copy returns NULL when no cipher was negotiated), so only the
//     other compound tests run.
//   - smb2.notify runs test by test, since some wait forever for a
//     notification the server does not send: mask, logoff,
//     session-reconnect, invalid-reauth and rmdir1-4 (changes made over
//     REST or other processes, or implied ones such as a watched
//     directory's own removal, are not reported). valid-req wants a
//     buffer above 0x80000 refused; tree sends a ".." path
//     (OBJECT_PATH_SYNTAX_BAD); rec and mask-change get
//     DIRECTORY_NOT_EMPTY where they expect a removal to succeed.
var tortureSuites = []struct {
	name string
	pass []string
}{
	{"smb2.connect", []string{"connect"}},
	{"smb2.read", []string{"eof", "position", "dir", "access"}},
	{"smb2.rw", []string{"rw1", "rw2", "invalid"}},
	{"smb2.sharemode", []string{"sharemode-access", "access-sharemode", "bug14375"}},
	{"smb2.deny", []string{"deny1", "deny2"}},
	{"smb2.credits", []string{"session_setup_credits_granted", "single_req_credits_granted", "skipped_mid"}},
	{"smb2.dir", []string{"find", "fixed", "many", "modify", "sorted", "large-files"}},
	{"smb2.getinfo", []string{"fsinfo", "qfs_buffercheck", "qsec_buffercheck", "granted"}},
	{"smb2.create", []string{"open", "brlocked", "multi", "delete", "leading-slash", "impersonation", "mkdir-dup", "dir-alloc-size",
		"dosattr_tmp_dir", "bench-path-contention-shared"}},
	// smb2.setinfo is one test that passes nowhere (smbd neither): run
	// for its count.
	{"smb2.setinfo", nil},
	{"smb2.delete-on-close-perms", []string{"OVERWRITE_IF", "CREATE", "CREATE Existing", "CREATE_IF", "FIND_and_set_DOC", "READONLY", "BUG14427"}},
	{"smb2.rename", []string{"simple", "simple_nodelete", "no_sharing", "share_delete_and_delete_access", "no_share_delete_but_delete_access",
		"share_delete_no_delete_access", "no_share_delete_no_delete_access", "msword", "rename_dir_openfile", "rename_dir_bench", "close-full-information"}},
	{"smb2.lock", []string{"valid-request", "rw-shared", "rw-exclusive", "auto-unlock", "lock", "async", "cancel",
		"cancel-tdis", "cancel-logoff", "errorcode", "zerobytelength", "zerobyteread", "unlock", "multiple-unlock",
		"stacking", "contend", "context", "range", "overlap", "truncate"}},
	{"smb2.compound.related3", []string{"related3"}},
	{"smb2.compound.related5", []string{"related5"}},
	{"smb2.compound.related6", []string{"related6"}},
	{"smb2.compound.related8", []string{"related8"}},
	{"smb2.compound.related9", []string{"related9"}},
	{"smb2.compound.unrelated1", []string{"unrelated1"}},
	{"smb2.compound.invalid1", []string{"invalid1"}},
	{"smb2.compound.invalid3", []string{"invalid3"}},
	{"smb2.compound.invalid4", []string{"invalid4"}},
	{"smb2.compound.interim1", []string{"interim1"}},
	{"smb2.compound.compound-break", []string{"compound-break"}},
	{"smb2.compound.create-write-close", []string{"create-write-close"}},
	{"smb2.compound_find", []string{"compound_find_related", "compound_find_unrelated", "compound_find_close"}},
	{"smb2.compound_async", []string{"flush_close", "flush_flush"}},
	{"smb2.tcon", []string{"tcon"}},
	{"smb2.mkdir", []string{"mkdir"}},
	{"smb2.openattr", []string{"openattr"}},
	{"smb2.winattr", []string{"winattr"}},
	{"smb2.timestamps", []string{"time_t_15032385535", "time_t_10000000000", "time_t_4294967295", "time_t_1", "time_t_0", "time_t_-1", "time_t_-2", "time_t_1968",
		"freeze-thaw", "delayed-1write"}},
	{"smb2.notify.tcon", []string{"tcon"}},
	{"smb2.notify.dir", []string{"dir"}},
	{"smb2.notify.tdis", []string{"tdis"}},
	{"smb2.notify.tdis1", []string{"tdis1"}},
	{"smb2.notify.close", []string{"close"}},
	{"smb2.notify.basedir", []string{"basedir"}},
	{"smb2.notify.double", []string{"double"}},
	{"smb2.notify.file", []string{"file"}},
	{"smb2.notify.tcp", []string{"tcp"}},
	{"smb2.notify.overflow", []string{"overflow"}},
	{"smb2.notify.handle-permissions", []string{"handle-permissions"}},
}

// TestSmbtorture runs the suites above and fails when a test that must
// pass does not.
//
// Under CI's full load (the whole suite with -race, other packages in
// parallel) smb2.dir.fixed and smb2.read.position have each failed once,
// on either store, while passing in isolation and under synthetic CPU
// load; a required test that fails is therefore retried alone before it
// counts (the output of every failure is logged).
func TestSmbtorture(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: smbtorture runs for minutes")
	}
	bin := need(t, "smbtorture")
	e := start(t)
	e.share("torture")
	total := map[string]int{}
	for _, s := range tortureSuites {
		t.Run(s.name, func(t *testing.T) {
			res, reasons := runTorture(t, bin, e.port, "torture", s.name)
			for k, names := range res {
				total[k] += len(names)
			}
			for _, name := range s.pass {
				if slices.Contains(res["success"], name) {
					continue
				}
				// A required test that failed is run again on its own, at
				// most twice: under a fully loaded CI machine a few
				// timing-sensitive tests have failed once while passing
				// every time in isolation (see TestSmbtorture's doc). The
				// failure is logged either way; a second failure fails.
				target := s.name
				if !strings.HasSuffix(s.name, "."+name) {
					target += "." + name
				}
				t.Logf("%s failed in its suite: %s", target, reasons[name])
				passed := false
				for try := 1; try <= 2 && !passed; try++ {
					again, why := runTorture(t, bin, e.port, "torture", target)
					passed = slices.Contains(again["success"], name)
					t.Logf("%s alone, try %d: passed=%v %s", target, try, passed, why[name])
				}
				if !passed {
					t.Errorf("%s did not pass", target)
				}
			}
			var extra []string
			for _, name := range res["success"] {
				if !slices.Contains(s.pass, name) {
					extra = append(extra, name)
				}
			}
			t.Logf("pass %d, fail %d, skip %d; failing: %v; passing beyond the list: %v",
				len(res["success"]), len(res["failure"])+len(res["error"]), len(res["skip"]),
				append(res["failure"], res["error"]...), extra)
		})
	}
	t.Logf("smbtorture totals: %v", total)
}

// runTorture runs one smbtorture suite or test and returns the test names
// by outcome (success, failure, error, skip) and, for failures and
// errors, the reason smbtorture printed.
func runTorture(t *testing.T, bin, port, shareName, suite string) (map[string][]string, map[string]string) {
	t.Helper()
	// The longest suite (smb2.dir) takes about 2 minutes on PostgreSQL
	// with the race detector; a run that hangs is killed well inside the
	// package's timeout, so it shows up as failed tests with their output.
	limit := 6 * time.Minute
	if strings.HasPrefix(suite, "smb2.notify.") {
		// One notify test takes well under a second. Some are racy in
		// smbtorture itself: basedir sends CHANGE_NOTIFY without waiting
		// for its interim response and at once changes a file over a
		// second connection; when the server handles that change first,
		// no notification is due and the test waits forever (seen once
		// under a fully loaded CI machine). Such a run is killed here
		// and counts as failed, so the retry below decides.
		limit = time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "//127.0.0.1/"+shareName, "-p", port,
		"-U", app.DevAccount+"%"+app.DevKey, suite)
	cmd.Dir = t.TempDir() // smbtorture leaves scratch directories in its cwd
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, _ := cmd.CombinedOutput() // failing tests make it exit non-zero
	res := map[string][]string{}
	reasons := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	reason := "" // the failure whose bracketed reason is being read
	for sc.Scan() {
		line := sc.Text()
		if reason != "" {
			if line == "]" {
				reason = ""
			} else {
				reasons[reason] += line + "\n"
			}
			continue
		}
		for _, k := range []string{"success", "failure", "error", "skip"} {
			if name, ok := strings.CutPrefix(line, k+": "); ok {
				name, rest, bracket := strings.Cut(name, " [")
				name = strings.TrimSpace(name)
				res[k] = append(res[k], name)
				if bracket && (k == "failure" || k == "error") && !strings.Contains(rest, "]") {
					reason = name
				}
			}
		}
	}
	if len(res) == 0 {
		// Killed, or smbtorture could not run: every required test of
		// the suite counts as failed (and is retried alone by the caller).
		t.Logf("smbtorture %s produced no results:\n%s", suite, out)
		reasons["*"] = "no results"
	}
	for k := range res {
		sort.Strings(res[k])
	}
	if os.Getenv("CERULEAN_TORTURE_LOG") != "" {
		t.Logf("smbtorture %s output:\n%s", suite, out)
	}
	return res, reasons
}
