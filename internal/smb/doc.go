// Package smb is Cerulean's SMB2/3 server: it serves the File service's
// shares to SMB clients (smbclient, Windows, cifs.ko) over Direct TCP.
//
// A Server accepts connections; each connection has one goroutine that
// reads frames and runs their requests in order, and one that writes
// responses. The wire format is package smb2's, authentication package
// ntlm's (NTLMv2 in SPNEGO, user = storage account name, password = an
// account key as base64 text), and every file operation goes through the
// File service's VFS, behind the FileSystem interface this package
// defines (fs.go; internal/app passes an smbfs.VFS), whose handles live in
// the store's global open table: share modes, delete-pending and
// List/Force Close Handles hold across the REST and SMB front ends.
//
// The VFS owner (the liveness identity of this server's handles) is one
// id per Server (DefaultOwner makes a random one); a goroutine renews its
// heartbeat, and Shutdown retires it, so a crashed server's handles
// expire after the lease.
//
// What is implemented (the "SMB front end" section below gives the
// reasons): dialects
// 2.0.2, 2.1, 3.0, 3.0.2 and 3.1.1 with signing (HMAC-SHA256, AES-CMAC;
// Config.RequireSigning requires it) and, when Config.Encrypt asks for
// it, SMB 3 encryption (AES-128/256-CCM/GCM; crypt.go); NEGOTIATE,
// SESSION_SETUP, LOGOFF, TREE_CONNECT (shares and IPC$), TREE_DISCONNECT,
// CREATE, CLOSE, FLUSH, READ, WRITE, QUERY_DIRECTORY, QUERY_INFO, SET_INFO, IOCTL (VALIDATE_NEGOTIATE_INFO),
// LOCK (byte-range locks in the store; blocking locks go async), ECHO,
// CHANGE_NOTIFY (changes made through this server) and CANCEL;
// related and unrelated compounds. Oplocks are always NONE; no leases,
// durable handles or multichannel.
//
// # SMB front end (internal/smb)
//
// The SMB server serves the same shares as the File REST API, over one
// store: an SMB open and a REST operation see each other's effects inside
// the same transactions (`internal/file/handle`). The protocol choices, and
// why:
//
//   - **Dialects 2.0.2 to 3.1.1, signing; encryption when configured.**
//     smbclient and smbtorture 4.17 offer 0x0202 to 0x0311 and pick 3.1.1.
//     Every dialect needs signing (HMAC-SHA256 for 2.x, AES-128-CMAC for 3.x,
//     the 3.1.1 preauthentication hash for key derivation, MS-SMB2 3.1.4.2),
//     so that is implemented for all of them. SecurityMode is "signing
//     enabled", "required" with `RequireSigning`. Encryption (`crypt.go`,
//     `smb2/transform.go`, `smb2/ccm.go`) is off by default: no ENCRYPTION
//     capability or negotiate context, since smbclient's default only
//     encrypts when the server demands it. With `Encrypt` desired or required
//     the server negotiates a cipher (3.0/3.0.2: AES-128-CCM; 3.1.1: its
//     preference AES-128-GCM, AES-128-CCM, AES-256-GCM, AES-256-CCM among the
//     client's), marks sessions and trees ENCRYPT_DATA, refuses their
//     unencrypted requests, and answers an encrypted frame (compounds
//     included) in one transform. CCM is our own (the standard library has
//     none), checked against SP 800-38C, RFC 3610 and OpenSSL. The setting is
//     server-wide: shares come from REST, which has no per-share SMB
//     encryption setting.
//   - **What is signed.** The Samba client checks the final SESSION_SETUP
//     response of 3.1.1 and always signs TREE_CONNECT once authenticated, so
//     those responses are signed for every dialect, as smbd does; otherwise a
//     response is signed when its request was, or when the session requires
//     signing (MS-SMB2 3.3.4.1.1). STATUS_PENDING interim responses and
//     STATUS_USER_SESSION_DELETED are never signed.
//   - **Capabilities: LARGE_MTU only.** No DFS (without it smbclient skips its
//     IPC$ referral detour), no LEASING, DIRECTORY_LEASING,
//     PERSISTENT_HANDLES or MULTI_CHANNEL; oplocks are always granted at level
//     NONE and lease and durable-handle create contexts are ignored. smbclient
//     asks for no oplocks, and smbtorture's lease and multichannel tests skip
//     themselves when the capability is absent.
//   - **NEGOTIATE layout.** The Samba client rejects a response whose security
//     buffer is not at offset 0x80 or whose contexts precede it
//     (libcli/smb/smbXcli_base.c), and requires exactly one PREAUTH context
//     with SHA-512; the response always carries a SPNEGO negTokenInit hint
//     (mechTypes = NTLMSSP, MS-SPNG 2.2.1), without which smbtorture sends
//     raw NTLMSSP (also accepted).
//   - **Authentication: NTLMv2 only** (MS-NLMP 3.3.2), with the account key as
//     the password as Azure Files does; the SPNEGO mechListMIC is checked and
//     answered (RFC 4178 §5), which smbclient requires when the CHALLENGE
//     carries MsvAvTimestamp.
//   - **Share modes and delete-pending** follow MS-FSA (the sharing check
//     2.1.5.1.2.2, delete-on-close and delete-pending 2.1.5.15.3), checked
//     against a global open table that REST operations consult too, with the
//     REST-side outcomes of Azure's "Managing file locks"
//     (https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks).
//   - **Compounding** is implemented (MS-SMB2 3.3.5.2.7): smbclient does not
//     use it, but Windows, cifs.ko and smbtorture's smb2.compound do.
//   - **Connection limits** (`limits.go`, `accept.go`). A client that has not
//     logged on can hold little, for little time: connections are capped in
//     all (1024) and per IP address (64), the next one closed as it is
//     accepted; a connection without a completed SESSION_SETUP 30 s after
//     its accept is closed; a frame's buffer is allocated only after its
//     4-byte transport header and its SMB header are checked (before
//     NEGOTIATE only a NEGOTIATE may come), is at most 64 KiB before logon
//     (NEGOTIATE and NTLM tokens are a few KiB) and the negotiated maximum
//     I/O size plus 64 KiB after, and grows eightfold from 16 KiB as the
//     bytes arrive, so announcing a frame costs no more than sending it
//     (1,000 connections announcing a frame and going silent: 28 KB of heap
//     and stack each, against 77 KB for 60 KiB frames and 275 KB for 250 KiB
//     ones before). A logged-on connection with no open file and no pending
//     operation that sends nothing for 15 minutes is closed, as Windows'
//     autodisconnect does; clients reconnect by themselves. The accept loop
//     retries errors such as EMFILE (5 ms doubling to 1 s, as net/http does)
//     and only ends when its listener is closed; a listener that stopped or
//     keeps failing with an unknown error makes `/readyz` answer 503.
package smb
