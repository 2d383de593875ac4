// Package smb2 is the SMB2/3 wire codec of Cerulean's SMB front end: Direct
// TCP framing, the packet header, compounding, the request and response
// bodies of every command the server handles, the MS-FSCC information
// structures, NTSTATUS codes, message signing, key derivation and the
// 3.1.1 preauthentication hash. It does no I/O beyond reading and writing
// frames and keeps no state; the server (package smb) owns connections,
// sessions, credits and dispatch.
//
// References: MS-SMB2 (section numbers in comments), MS-FSCC for the
// information classes, MS-DTYP for FILETIME and security descriptors. The
// server's choices — dialects 2.0.2 to 3.1.1, signing with HMAC-SHA256 or
// AES-CMAC, encryption (AES-CCM/GCM, transform.go) when configured, no
// oplocks or leases — and their reasons are in
// the internal/smb package documentation ("SMB front end").
//
// # Receiving
//
//	payload, err := smb2.ReadFrame(conn, maxSize)   // one Direct TCP frame
//	switch smb2.ProtocolOf(payload) { … }           // SMB2, SMB1 (DecodeSMB1Negotiate), transform, compression
//	pdus, err := smb2.SplitCompound(payload)        // follow NextCommand; one PDU for a plain request
//	for _, msg := range pdus {
//		h, err := smb2.ParseHeader(msg)
//		// check the signature: smb2.Verify(msg, keys.Signing[:], alg)
//		switch h.Command {
//		case smb2.CommandCreate:
//			req, err := smb2.DecodeCreateRequest(msg)
//			…
//		}
//	}
//
// Every decoder takes one whole PDU, header included (offsets in SMB2
// bodies count from the start of the header), and returns a value struct.
// Variable-length fields of requests (write data, security blobs, IOCTL
// buffers, SET_INFO buffers) alias the message; strings are decoded from
// UTF-16LE. Decoders are strict: the StructureSize must match, the fixed
// part must be present, and every offset/length pair must lie after the
// fixed part and inside the PDU (an empty buffer is accepted whatever its
// offset). A violation returns a *MalformedError, which unwraps to
// StatusInvalidParameter, so the server can answer
//
//	if s, ok := smb2.AsStatus(err); ok { reply with s }
//
// Semantic checks (which flag combinations are valid, access rights,
// dispositions) are the server's, except where MS-SMB2 makes them part of
// the syntax (NEGOTIATE with no dialects, LOCK with no elements,
// duplicate negotiate contexts). No input makes a decoder panic; the
// decoders are fuzzed (FuzzDecodeMessage, FuzzDecodeStructures,
// FuzzReadFrame) with the property that whatever decodes re-encodes to
// something that decodes to the same value.
//
// # Sending
//
// Each body type has Encode() []byte, returning the body that follows the
// 64-byte header; Marshal joins them:
//
//	h := req.Reply(smb2.StatusSuccess)              // response header for request header req
//	h.Credits = granted
//	msg := smb2.Marshal(h, smb2.CreateResponse{…}.Encode())
//	smb2.Sign(msg, keys.Signing[:], alg)            // if the response must be signed (MS-SMB2 3.3.4.1.1)
//	smb2.WriteFrame(conn, msg)
//
// A failed command gets smb2.ErrorResponse{}.Encode() as its body
// (NewErrorMessage builds the whole PDU). Compound responses are built
// with BuildCompound, whose callback signs each PDU after its NextCommand
// and padding are final. Buffers are placed where Windows and Samba put
// them (NEGOTIATE security buffer at 0x80, READ data at 0x50, QUERY_*
// output at 0x48, IOCTL buffers at 0x70), with 8-byte alignment where
// MS-SMB2 asks for it.
//
// Query results are built from the information structures:
//
//	out, status := smb2.EncodeInfo(smb2.FileAllInformation{…}, req.OutputBufferLength)
//	// status is Success, BufferOverflow (out truncated) or InfoLengthMismatch (out nil)
//	buf, n, err := smb2.EncodeDirEntries(req.FileInformationClass, entries, int(req.OutputBufferLength))
//	// n entries fit; the rest wait for the next QUERY_DIRECTORY
//
// SET_INFO buffers are decoded with DecodeFileBasicInformation,
// DecodeFileRenameInformation (classes 10 and 11),
// DecodeFileDispositionInformation, DecodeFileEndOfFileInformation and the
// other Decode…Information functions. Times are Filetime values
// (FiletimeOf and Filetime.Time convert to and from time.Time); the
// special SET_INFO values 0, -1 and -2 survive decoding untouched.
//
// # Security
//
// Session keys come from NTLM (package ntlm); this package turns them into
// signing keys and signatures:
//
//	var ph smb2.PreauthHash                         // per connection, 3.1.1 only
//	ph.Update(negotiateRequest); ph.Update(negotiateResponse)
//	sess := ph                                      // per session: copy, then
//	sess.Update(sessionSetupRequest)                // every SESSION_SETUP request and
//	sess.Update(moreProcessingResponse)             // every MORE_PROCESSING_REQUIRED response
//	keys, err := smb2.DeriveKeys(dialect, exportedSessionKey, sess)
//	alg := smb2.DefaultSigningAlgorithm(dialect)    // or the SIGNING context's choice
//
// Sign and Verify implement HMAC-SHA256 (2.0.2, 2.1) and AES-128-CMAC
// (3.x; RFC 4493, implemented here since the standard library keeps its
// CMAC internal). AES-GMAC is recognised in negotiate contexts but not
// implemented: the server offers CMAC only. All of it is checked against
// the captured Samba traffic in testdata/vector_*.json.
package smb2
