// Package handle keeps the store-backed records of open SMB-style file
// handles: what the File REST service lists (List Handles), closes (Force
// Close Handles) and checks its operations against (409 SharingViolation,
// 409 SMBDeletePending), and what an SMB2 front end will create and close.
//
// Every function works inside a caller's kv.Tx, so a caller combines it
// atomically with its own writes (delete the file when the last handle of
// a delete-pending file closes, check sharing and write the range, ...).
// Functions that write need an Update transaction. The package keeps no
// state in memory and takes the time as an argument: nothing is decided by
// a timer.
//
// # Identity and records
//
// A file or directory is (account, share, fileID); fileID is the caller's
// stable id of the object (it survives renames). Keys (kv.Key tuples):
//
//	("fh",  account, share, fileID, handleID)  a handle (JSON record)
//	("fhf", account, share, fileID)            per-file state: DeletePending;
//	                                           present iff the file has handle
//	                                           records, rewritten by every Open
//	                                           and Close (a guard key, so that
//	                                           concurrent opens of one file
//	                                           conflict as write-write even on
//	                                           snapshot-isolated engines)
//	("fhp", account, share, fileID)            present iff the file is
//	                                           delete-pending (the state's
//	                                           flag), so listings read a
//	                                           share's pending files at once
//	("fhs", sessionID, account, share, fileID, handleID)   close-by-session index
//	("fhw", owner, incarnation, account, share, fileID, handleID)  reap index
//	("fho", owner)                             owner liveness
//	("fhl", account, share, fileID, handleID)  the handle's byte-range locks
//
// Handle keys sort by (account, share, fileID, handleID), so a share's
// handles list in a deterministic order and a listing resumes after a
// Position (see List, EncodeMarker). Handle IDs are Azure-style: a random
// nonzero uint64 in decimal.
//
// # Owners and liveness
//
// Each handle belongs to an owner: the id of the front end holding the
// SMB connection (an SMB2 server process; for handles created through the
// Go API, whatever name the caller picks). The owner proves it is alive by
// calling Heartbeat regularly with an expiry. At time now a handle is live
// only if its owner's record exists, has not expired (now < until), and is
// of the same incarnation as when the handle was opened: a Heartbeat that
// arrives after the record expired (or was deleted) starts a new random
// incarnation, so handles that died never come back to life, even if the
// owner returns. Dead handles are ignored by every check and listing;
// Reap deletes them and applies their delete-on-close. Retire ends an
// owner at once (clean shutdown). Open requires a live owner
// (ErrOwnerNotLive), so a test creating handles through the Go API calls
// Heartbeat(tx, now, "test", farFuture) first.
//
// Liveness compares the caller's now with expiries written by other
// processes: host clocks must agree to well within the heartbeat margin
// (owner interval vs. expiry), e.g. a few seconds for a 30 s expiry.
//
// # Sharing and delete-pending
//
// Open applies the share-access check of MS-FSA 2.1.5.1.2 (see Conflicts)
// against every live open of the file, atomically with creating the handle.
// A file becomes delete-pending when a handle opened with DeleteOnClose is
// closed, or through SetDeletePending (FileDispositionInformation) on a
// handle with Delete access. A delete-pending file refuses new opens and
// every REST operation (ErrDeletePending); when its last live handle goes
// (Close, ForceClose, CloseSession, Reap or Settle), the call reports the
// file in Result.Delete and the caller deletes the file in the same
// transaction. A delete-pending file whose remaining handles are all dead
// keeps answering ErrDeletePending until Reap or Settle reports it.
//
// # Byte-range locks
//
// Lock and Unlock keep a handle's byte-range locks; CheckRead and
// CheckWrite decide whether a read or write through a handle (or by a
// REST operation) overlaps a lock that forbids it. Locks die with their
// handle and a dead handle's locks are ignored at once (see locks.go).
//
// CheckREST decides whether a File REST operation may proceed given the
// live handles; RESTAccess maps REST operations to what they need, as
// Azure documents it in "Managing file locks" (see rest.go).
//
// # Concurrency
//
// Decisions read the handle records, the per-file state and owner records
// of the file in the caller's transaction, which the kv contract makes
// serializable: of two racing exclusive opens exactly one commits.
// CheckREST only reads; on a serializable engine (bbolt, PostgreSQL
// SERIALIZABLE) a REST write checked by it cannot interleave with an Open
// that would forbid it.
package handle
