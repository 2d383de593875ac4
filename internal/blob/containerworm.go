package blob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Container-level WORM ("Container-level write once, read many (WORM)
// policies for immutable blob data",
// https://learn.microsoft.com/azure/storage/blobs/immutable-container-level-worm-policies;
// "Time-based retention policies for immutable blob data",
// https://learn.microsoft.com/azure/storage/blobs/immutable-time-based-retention-policy-overview;
// "Legal holds for immutable blob data",
// https://learn.microsoft.com/azure/storage/blobs/immutable-legal-hold-overview).
//
// On Azure these are set on the management plane (ARM BlobContainers
// CreateOrUpdateImmutabilityPolicy, LockImmutabilityPolicy,
// ExtendImmutabilityPolicy, DeleteImmutabilityPolicy, SetLegalHold,
// ClearLegalHold); here the methods below are reached through the admin
// endpoint blobrest.WORMHandler mounts under /.cerulean/worm. A
// container's policy and legal hold live in its record (container.WORM),
// so every backend keeps them and they survive a restart.
//
// The policy (wormPolicy) follows ARM's ImmutabilityPolicyProperties:
//
//   - immutabilityPeriodSinceCreationInDays is 1 to 146000 (the
//     time-based retention page: "The minimum retention interval ... is
//     one day, and the maximum is 146,000 days");
//   - created or changed only while Unlocked (If-Match on its ETag once
//     it exists); Lock turns it Locked for good; Extend only a Locked one,
//     only to a longer period, and at most wormMaxExtensions times (the
//     time-based retention page: "A maximum of five increases to the
//     effective retention period is allowed over the lifetime of a locked
//     policy that is defined at the container level"); Delete only an
//     Unlocked one. A refusal of these state rules answers 409 with the message Azure's management plane
//     gives, "Operation not allowed on immutability policy with current
//     state." (quoted by the Az PowerShell storage tests); the error code
//     of that ARM answer is in no public source found, so Cerulean sends
//     InvalidOperation (unsourced). An If-Match that does not match, or a
//     policy that does not exist, is 412 ConditionNotMet (RFC 9110
//     If-Match).
//   - allowProtectedAppendWrites (append blobs) and
//     allowProtectedAppendWritesAll (append and block blobs) are mutually
//     exclusive (ARM's ImmutabilityPolicyProperties reference) and change
//     only on an Unlocked policy; Extend does not change them.
//
// The legal hold is a set of tags (at most 10, each 3 to 23 alphanumeric
// characters: the container-level WORM page's Limits; lower case as ARM's
// LegalHold stores them); it is on while it has a tag. The policy keeps
// its last seven updates ("The audit log includes up to seven time-based
// retention commands for locked time-based retention policies",
// immutable-storage-overview.md).
//
// Enforcement: the scenarios table of the container-level WORM page
// (MicrosoftDocs/azure-docs,
// articles/storage/blobs/immutable-container-level-worm-policies.md).
// While a policy's retention of a blob is active or a legal hold is on,
// Delete Blob, Put Blob over an existing blob (and the other overwrites:
// Put Block List, Copy Blob, Put Blob From URL), Set Blob Metadata, Put
// Page, Set Blob Properties, Snapshot Blob and Append Block are
// prohibited; once the retention has expired and no hold is on, the same
// but Delete Blob ("Delete operations are allowed. Overwrite operations
// aren't allowed"), for as long as the policy exists. Creating blobs is
// allowed ("Azure Storage permits the Put Blob operation to create a new
// blob"). Append Block is permitted "only for policies with the
// allowProtectedAppendWrites or allowProtectedAppendWritesAll property
// enabled" (and, under a legal hold, its allowProtectedAppendWritesAll);
// allowProtectedAppendWritesAll's block blob appends are the Data Lake
// API's append and flush, "the Blob Storage API doesn't provide a way for
// applications to do this directly", so on a flat account it allows what
// allowProtectedAppendWrites does. Refusals are 409
// BlobImmutableDueToLegalHold (a hold) or BlobImmutableDueToPolicy (a
// policy), the codes the Blob service answers for immutable blobs
// (MicrosoftDocs/feedback#1844). Put Block (staging), Set Blob Tier and
// Set Blob Tags are not in the table and stay allowed ("You can change
// the access tier of a blob with the Set Blob Tier operation",
// immutable-storage-overview.md).
//
// A blob's retention ends at its creation time (x-ms-creation-time,
// which an overwrite keeps) plus the period, "the difference between the
// blob's creation time and the user-specified retention interval"; an
// append blob's at its last modification plus the period (the "effective
// retention ... between append blob's last modification time and the
// user-specified retention interval"), both on the injected clock
// (immutable-time-based-retention-policy-overview.md).
//
// Delete Container: "You can delete a container that has a
// container-level WORM policy only by using control plane operations ...
// a data plane operation ... won't succeed", and then only once it is
// empty (container-level WORM page, Deletion). The data plane's refusals
// are 409 ContainerHasLegalHold while a hold is on and 409
// ContainerImmutabilityPolicyLocked with a Locked policy
// (MicrosoftDocs/feedback#1844, Azure/azure-powershell#26148). With an
// Unlocked policy Cerulean deletes an empty container (the policy could
// be deleted first, "Unlocked policies don't provide delete protection")
// and refuses one that holds blobs with 409 BlobImmutableDueToPolicy: no
// public source names the code of that answer (inferred). The admin
// endpoint's control-plane delete (DeleteContainerInput.ControlPlane)
// deletes an empty container whatever its policy, not one under a hold
// or with blobs.
//
// Hierarchical namespace accounts: "Container-level WORM policies are
// supported in accounts that have a hierarchical namespace"
// (immutable-storage-overview.md, feature options table). The filesystem
// is the container and keeps its settings in the same record; the
// namespace's writes apply the rules above to its files, with the same
// codes (hns_worm.go): Path - Create over a file, Set Blob Metadata and
// Properties, Snapshot Blob, Delete Blob and Path - Delete of a file. The
// Data Lake API's append and flush to a file are the block blob appends
// allowProtectedAppendWritesAll allows ("applications can accomplish this
// by using append and flush methods that are available in the Data Lake
// Storage API", wormAppendAll); to an append blob file they are Append
// Block. "If hierarchical namespace is enabled, you can't rename or move
// a blob when the blob is in the immutable state" (container-level WORM
// page, Availability): a rename of a file, or of a directory holding
// one, is refused while a delete of that file would be, and a rename
// onto a file is an overwrite. "If there's a policy set on a container
// with hierarchical namespace enabled, a directory must be empty before
// it can be deleted" (Deletion): a recursive delete is refused whole,
// with a protected file's code, or 409 DirectoryNotEmpty (inferred) when
// the directory only is not empty. New files and directories are
// created; access control (owner, group, ACL) is neither content nor
// user metadata ("All blobs in the container are immutable for content
// and user metadata", the scenarios table) and stays allowed, as do
// leases, tags and tiers. Delete Container counts the filesystem's paths,
// soft-deleted ones included.

// Policy states as ARM names them.
const (
	WORMUnlocked = "Unlocked"
	WORMLocked   = "Locked"
)

// Limits of ARM's ImmutabilityPolicyProperties and LegalHold.
const (
	wormMinDays       = 1
	wormMaxDays       = 146000
	wormMaxExtensions = 5
	wormMaxTags       = 10
	wormMaxHistory    = 7
)

// holding reports whether the legal hold is on.
func (w *containerWORM) holding() bool { return w != nil && w.Hold != nil && len(w.Hold.Tags) > 0 }

// empty reports whether w sets nothing.
func (w *containerWORM) empty() bool { return w == nil || (w.Policy == nil && !w.holding()) }

const (
	wormNone      wormOp = iota // a write no WORM rule refuses (leases, tags, tier, seal)
	wormWrite                   // a change of an existing blob: overwrite, metadata, properties, pages, snapshot
	wormDelete                  // Delete Blob
	wormAppend                  // Append Block
	wormAppendAll               // the Data Lake API's append and flush to a file that is no append blob
)

// refuse returns the refusal of op on b at now, or nil (see above).
func (w *containerWORM) refuse(b *blobRec, op wormOp, now time.Time) error {
	if op == wormNone || w.empty() || b == nil {
		return nil
	}
	pol := w.containerPolicy()
	if w.holding() {
		if (op == wormAppend || op == wormAppendAll) && w.Hold.AppendWritesAll && pol.allows(b, op, now) {
			return nil
		}
		return azerr.New(azerr.BlobImmutableDueToLegalHold)
	}
	if pol.allows(b, op, now) {
		return nil
	}
	return azerr.New(azerr.BlobImmutableDueToPolicy)
}

// containerPolicy is w's policy when its scope is the container (nil:
// none, or a default version-level policy, which protects versions
// through their own policies instead).
func (w *containerWORM) containerPolicy() *wormPolicy {
	if w == nil || w.Policy == nil || w.Policy.Version {
		return nil
	}
	return w.Policy
}

// defaultPolicy is the version-level policy a version written at now
// into a container with a default version-level policy inherits (nil:
// none): its period from now, Locked when the default is locked,
// Unlocked otherwise. "If a default policy is in effect for the storage
// account or container, then when an overwrite operation creates a
// previous version, the new current version inherits the default
// policy"; "If the default time-based retention policy for the account
// or container is locked, then the current version of a blob that
// inherits the default policy will also have a locked policy"
// (https://learn.microsoft.com/azure/storage/blobs/immutable-version-level-worm-policies).
// A write that sets a policy of its own overrides it; a default changed
// later leaves the versions' policies as they are.
func (w *containerWORM) defaultPolicy(now time.Time) *immPolicy {
	if w == nil || w.Policy == nil || !w.Policy.Version {
		return nil
	}
	mode := PolicyUnlocked
	if w.Policy.State == WORMLocked {
		mode = PolicyLocked
	}
	return &immPolicy{Until: now.Add(time.Duration(w.Policy.Days) * 24 * time.Hour), Mode: mode}
}

// allows reports whether the policy p (nil: none) allows op on b at now.
func (p *wormPolicy) allows(b *blobRec, op wormOp, now time.Time) bool {
	switch {
	case p == nil:
		return true
	case op == wormDelete:
		from := b.Created
		if b.Type == AppendBlob {
			from = b.Modified
		}
		return !now.Before(from.Add(time.Duration(p.Days) * 24 * time.Hour))
	case op == wormAppend:
		return p.AppendWrites || p.AppendWritesAll
	case op == wormAppendAll:
		return p.AppendWritesAll
	}
	return false
}

// wormTag marks a container record that may have a WORM field: the JSON
// of one without it never holds the key (a metadata name "w" may hold it
// too; the record is then decoded to be sure).
var wormTag = []byte(`"w":{`)

// wormOf reads the WORM settings of the container acct/c, nil when it
// has none or is missing. The record is read anyway by the writes that
// call it (findBlob), so it costs no round trip; a container without
// settings is told by a byte search, without decoding.
func wormOf(tx kv.Tx, acct, c string) (*containerWORM, error) {
	raw, err := tx.Get(ContainerKey(acct, c))
	if err == kv.ErrNotFound {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return wormFrom(raw)
}

// wormFrom is wormOf of the container record raw as stored (nil:
// missing), for a write that has read it already.
func wormFrom(raw []byte) (*containerWORM, error) {
	if !bytes.Contains(raw, wormTag) {
		return nil, nil
	}
	var rec struct {
		W *containerWORM `json:"w"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, err
	}
	if rec.W.empty() {
		return nil, nil
	}
	return rec.W, nil
}

// wormRefuse is refuse of the WORM settings of ref's container.
func wormRefuse(tx kv.Tx, ref BlobRef, b *blobRec, op wormOp, now time.Time) error {
	w, err := wormOf(tx, ref.Account, ref.Container)
	if err != nil {
		return err
	}
	return w.refuse(b, op, now)
}

// errWORMState is the management plane's refusal of a policy operation
// in the policy's current state (the message as the Az PowerShell storage
// tests quote it; the code is unsourced, see above).
func errWORMState() error {
	return azerr.Newf(azerr.InvalidOperation, "Operation not allowed on immutability policy with current state.").WithStatus(409)
}

// WORMPolicyInput is a policy's settable properties
// (ImmutabilityPolicyProperties).
type WORMPolicyInput struct {
	Days            int
	AppendWrites    bool
	AppendWritesAll bool
}

// checkPolicyInput refuses a period out of range and both append flags.
func checkPolicyInput(in WORMPolicyInput) error {
	if in.Days < wormMinDays || in.Days > wormMaxDays {
		return azerr.Newf(azerr.InvalidInput, "immutabilityPeriodSinceCreationInDays must be between %d and %d.", wormMinDays, wormMaxDays)
	}
	if in.AppendWrites && in.AppendWritesAll {
		return azerr.Newf(azerr.InvalidInput, "allowProtectedAppendWrites and allowProtectedAppendWritesAll are mutually exclusive.")
	}
	return nil
}

// ifMatch checks If-Match against the policy: a policy that does not
// exist matches nothing, "*" any that does.
func ifMatch(p *wormPolicy, want string) error {
	if p == nil || (want != "*" && want != p.ETag) {
		return azerr.New(azerr.ConditionNotMet)
	}
	return nil
}

// putPolicy is CreateOrUpdateImmutabilityPolicy's state machine: a new
// policy (ifm must be empty or "*"-less: any If-Match on a missing policy
// fails) or a change of an Unlocked one under If-Match.
func putPolicy(cur *wormPolicy, in WORMPolicyInput, ifm string, now time.Time) (*wormPolicy, error) {
	if err := checkPolicyInput(in); err != nil {
		return nil, err
	}
	if cur == nil {
		if ifm != "" {
			return nil, azerr.New(azerr.ConditionNotMet)
		}
		p := &wormPolicy{Days: in.Days, State: WORMUnlocked, AppendWrites: in.AppendWrites, AppendWritesAll: in.AppendWritesAll}
		return p.stamp("put", now), nil
	}
	if ifm == "" {
		return nil, azerr.MissingHeader("If-Match")
	}
	if err := ifMatch(cur, ifm); err != nil {
		return nil, err
	}
	if cur.State != WORMUnlocked {
		return nil, errWORMState()
	}
	p := cur.clone()
	p.Days, p.AppendWrites, p.AppendWritesAll = in.Days, in.AppendWrites, in.AppendWritesAll
	return p.stamp("put", now), nil
}

// lockPolicy is LockImmutabilityPolicy: Unlocked to Locked.
func lockPolicy(cur *wormPolicy, ifm string, now time.Time) (*wormPolicy, error) {
	if err := requireIfMatch(cur, ifm); err != nil {
		return nil, err
	}
	if cur.State != WORMUnlocked {
		return nil, errWORMState()
	}
	p := cur.clone()
	p.State = WORMLocked
	return p.stamp("lock", now), nil
}

// extendPolicy is ExtendImmutabilityPolicy: a Locked policy's period
// grows, at most wormMaxExtensions times.
func extendPolicy(cur *wormPolicy, days int, ifm string, now time.Time) (*wormPolicy, error) {
	if err := requireIfMatch(cur, ifm); err != nil {
		return nil, err
	}
	if err := checkPolicyInput(WORMPolicyInput{Days: days}); err != nil {
		return nil, err
	}
	if cur.State != WORMLocked || days <= cur.Days {
		return nil, errWORMState()
	}
	if cur.Extensions >= wormMaxExtensions {
		return nil, azerr.Newf(azerr.InvalidOperation, "A locked immutability policy can be extended at most %d times.", wormMaxExtensions).WithStatus(409)
	}
	p := cur.clone()
	p.Days = days
	p.Extensions++
	return p.stamp("extend", now), nil
}

// deletePolicyCheck is DeleteImmutabilityPolicy's rule: only an Unlocked
// policy, under If-Match.
func deletePolicyCheck(cur *wormPolicy, ifm string) error {
	if err := requireIfMatch(cur, ifm); err != nil {
		return err
	}
	if cur.State != WORMUnlocked {
		return errWORMState()
	}
	return nil
}

// requireIfMatch is the If-Match the lock, extend and delete operations
// need (ARM marks it required).
func requireIfMatch(cur *wormPolicy, ifm string) error {
	if ifm == "" {
		return azerr.MissingHeader("If-Match")
	}
	return ifMatch(cur, ifm)
}

func (p *wormPolicy) clone() *wormPolicy {
	c := *p
	c.History = slices.Clone(p.History)
	return &c
}

// stamp gives p a new ETag and records the update.
func (p *wormPolicy) stamp(update string, now time.Time) *wormPolicy {
	p.ETag = newETag(now)
	p.History = append(p.History, WORMUpdate{Update: update, ImmutabilityPeriodSinceCreationInDays: p.Days, Timestamp: now.UTC(),
		AllowProtectedAppendWrites: p.AppendWrites, AllowProtectedAppendWritesAll: p.AppendWritesAll})
	if n := len(p.History); n > wormMaxHistory {
		p.History = slices.Clone(p.History[n-wormMaxHistory:])
	}
	return p
}

// checkHoldTags validates legal hold tags as ARM's LegalHold describes
// them (3 to 23 characters, lowercase letters and digits, at most 10);
// it returns them lower-cased.
func checkHoldTags(tags []string) ([]string, error) {
	if len(tags) == 0 || len(tags) > wormMaxTags {
		return nil, azerr.Newf(azerr.InvalidInput, "A legal hold takes 1 to %d tags.", wormMaxTags)
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.ToLower(t)
		ok := len(t) >= 3 && len(t) <= 23
		for _, r := range t {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
				ok = false
			}
		}
		if !ok {
			return nil, azerr.Newf(azerr.InvalidInput, "Legal hold tag %q must be 3 to 23 lowercase letters and digits.", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// WORMState is a container's policy and legal hold as the admin
// endpoint shows them (nil: none).
type WORMState struct {
	Policy *WORMPolicy
	Hold   *WORMHold
}

// WORMPolicy is a container's policy (ImmutabilityPolicyProperties).
type WORMPolicy struct {
	Days            int
	State           string
	AppendWrites    bool
	AppendWritesAll bool
	ETag            string
	Extensions      int
	History         []WORMUpdate
}

// WORMHold is a container's legal hold (LegalHold).
type WORMHold struct {
	Tags            []string
	AppendWritesAll bool
}

func (w *containerWORM) state() WORMState {
	var st WORMState
	if w == nil {
		return st
	}
	if p := w.Policy; p != nil {
		st.Policy = &WORMPolicy{Days: p.Days, State: p.State, AppendWrites: p.AppendWrites, AppendWritesAll: p.AppendWritesAll,
			ETag: p.ETag, Extensions: p.Extensions, History: slices.Clone(p.History)}
	}
	if w.holding() {
		st.Hold = &WORMHold{Tags: slices.Clone(w.Hold.Tags), AppendWritesAll: w.Hold.AppendWritesAll}
	}
	return st
}

// editWORM runs fn on the container's WORM settings in one transaction
// and stores them (the container's ETag and Last-Modified stay: on Azure
// these are management-plane settings of the container resource).
func (s *Service) editWORM(ctx context.Context, ref ContainerRef, fn func(w *containerWORM) error) (WORMState, error) {
	var st WORMState
	err := s.store.Update(ctx, func(tx kv.Tx) error {
		c, err := loadContainer(tx, ref.Account, ref.Container)
		if err != nil {
			return err
		}
		w := &containerWORM{}
		if c.WORM != nil {
			w.Policy, w.Hold = c.WORM.Policy, c.WORM.Hold
		}
		if err := fn(w); err != nil {
			return err
		}
		if w.Hold != nil && len(w.Hold.Tags) == 0 {
			w.Hold = nil
		}
		c.WORM = w
		if w.empty() {
			c.WORM = nil
		}
		st = w.state()
		return kv.PutJSON(tx, ContainerKey(ref.Account, ref.Container), c)
	})
	return st, err
}

// GetContainerWORM returns a container's policy and legal hold.
func (s *Service) GetContainerWORM(ctx context.Context, ref ContainerRef) (WORMState, error) {
	var st WORMState
	err := s.store.View(ctx, func(tx kv.Tx) error {
		c, err := loadContainer(tx, ref.Account, ref.Container)
		if err != nil {
			return err
		}
		st = c.WORM.state()
		return nil
	})
	return st, err
}

// PutContainerPolicy is CreateOrUpdateImmutabilityPolicy (ifMatch: the
// If-Match header, "" when absent).
func (s *Service) PutContainerPolicy(ctx context.Context, c Call, ref ContainerRef, in WORMPolicyInput, ifMatch string) (WORMState, error) {
	now := s.now(c)
	// On a container with version-level immutability support the
	// policy is the default for the versions written into it, decided
	// when it is created ("After a container is enabled for
	// version-level immutability, you can specify a default
	// version-level time-based retention policy for the container",
	// immutable-policy-configure-version-scope).
	version := s.immutabilityOn(ref.Account)
	return s.editWORM(ctx, ref, func(w *containerWORM) (err error) {
		created := w.Policy == nil
		w.Policy, err = putPolicy(w.Policy, in, ifMatch, now)
		if err == nil && created {
			w.Policy.Version = version
		}
		return err
	})
}

// LockContainerPolicy is LockImmutabilityPolicy.
func (s *Service) LockContainerPolicy(ctx context.Context, c Call, ref ContainerRef, ifMatch string) (WORMState, error) {
	now := s.now(c)
	return s.editWORM(ctx, ref, func(w *containerWORM) (err error) {
		w.Policy, err = lockPolicy(w.Policy, ifMatch, now)
		return err
	})
}

// ExtendContainerPolicy is ExtendImmutabilityPolicy.
func (s *Service) ExtendContainerPolicy(ctx context.Context, c Call, ref ContainerRef, days int, ifMatch string) (WORMState, error) {
	now := s.now(c)
	return s.editWORM(ctx, ref, func(w *containerWORM) (err error) {
		w.Policy, err = extendPolicy(w.Policy, days, ifMatch, now)
		return err
	})
}

// DeleteContainerPolicy is DeleteImmutabilityPolicy.
func (s *Service) DeleteContainerPolicy(ctx context.Context, ref ContainerRef, ifMatch string) (WORMState, error) {
	return s.editWORM(ctx, ref, func(w *containerWORM) error {
		if err := deletePolicyCheck(w.Policy, ifMatch); err != nil {
			return err
		}
		w.Policy = nil
		return nil
	})
}

// SetContainerLegalHold is SetLegalHold: tags are added to the hold's;
// appendAll sets allowProtectedAppendWritesAll.
func (s *Service) SetContainerLegalHold(ctx context.Context, ref ContainerRef, tags []string, appendAll bool) (WORMState, error) {
	tags, err := checkHoldTags(tags)
	if err != nil {
		return WORMState{}, err
	}
	return s.editWORM(ctx, ref, func(w *containerWORM) error {
		h := &wormHold{AppendWritesAll: appendAll}
		if w.Hold != nil {
			h.Tags = slices.Clone(w.Hold.Tags)
		}
		for _, t := range tags {
			if !slices.Contains(h.Tags, t) {
				h.Tags = append(h.Tags, t)
			}
		}
		if len(h.Tags) > wormMaxTags {
			return azerr.Newf(azerr.InvalidInput, "A legal hold takes at most %d tags.", wormMaxTags)
		}
		w.Hold = h
		return nil
	})
}

// ClearContainerLegalHold is ClearLegalHold: tags are removed from the
// hold; with none left the hold is off.
func (s *Service) ClearContainerLegalHold(ctx context.Context, ref ContainerRef, tags []string) (WORMState, error) {
	tags, err := checkHoldTags(tags)
	if err != nil {
		return WORMState{}, err
	}
	return s.editWORM(ctx, ref, func(w *containerWORM) error {
		if w.Hold == nil {
			return nil
		}
		h := *w.Hold
		h.Tags = slices.DeleteFunc(slices.Clone(h.Tags), func(t string) bool { return slices.Contains(tags, t) })
		w.Hold = &h
		return nil
	})
}

// containerHolds reports whether the container holds blobs: on a
// hierarchical account, paths of its filesystem, live or soft-deleted.
func (s *Service) containerHolds(tx kv.Tx, ref ContainerRef) (bool, error) {
	hns := s.nsOf(ref.Account)
	if hns == nil {
		return containerHoldsBlobs(tx, ref.Account, ref.Container)
	}
	empty, err := hns.FilesystemEmpty(tx, ns.FS{Account: ref.Account, Filesystem: ref.Container})
	if errors.Is(err, ns.ErrFilesystemNotFound) {
		return false, nil
	}
	return !empty, err
}

// containerDeleteRefusal is Delete Container's rule for a container with
// WORM settings (see above); controlPlane is the admin endpoint's
// delete.
func (s *Service) containerDeleteRefusal(tx kv.Tx, ref ContainerRef, w *containerWORM, controlPlane bool) error {
	if w.empty() {
		return nil
	}
	if w.holding() {
		return azerr.New(azerr.ContainerHasLegalHold)
	}
	held, err := s.containerHolds(tx, ref)
	if err != nil {
		return err
	}
	pol := w.containerPolicy()
	switch {
	case pol == nil:
		// A default version-level policy: the container goes once it
		// is empty ("Once an account or container is enabled for an
		// immutable policy, it can't be deleted until it's empty",
		// immutable-version-level-worm-policies; the emptiness rule
		// is the version-level one, immutability.go).
	case pol.State == WORMLocked && (held || !controlPlane):
		return azerr.New(azerr.ContainerImmutabilityPolicyLocked)
	case held:
		return azerr.New(azerr.BlobImmutableDueToPolicy)
	}
	return nil
}

// pathWORM reads the WORM settings of fs's container.
func pathWORM(tx kv.Tx, fs ns.FS) (*containerWORM, error) {
	return wormOf(tx, fs.Account, fs.Filesystem)
}

// refusePath is refuse of op on the file n (nil, or a directory: none).
func (w *containerWORM) refusePath(n *ns.Node, op wormOp, now time.Time) error {
	if w.empty() || n == nil || n.Dir {
		return nil
	}
	b, _ := pathRec(n)
	return w.refuse(b, op, now)
}

// refuseSubtree refuses op on the directory n when a file below it
// refuses it (the first refusal found); a file is refusePath.
func (w *containerWORM) refuseSubtree(tx kv.Tx, hns *ns.Namespace, fs ns.FS, n *ns.Node, op wormOp, now time.Time) error {
	if w.empty() {
		return nil
	}
	if !n.Dir {
		return w.refusePath(n, op, now)
	}
	return hns.EachFile(tx, fs, n, func(f *ns.Node) error { return w.refusePath(f, op, now) })
}

// refusePathDelete is the WORM rule of Path - Delete of n: a file as
// Delete Blob; a directory deleted recursively with a protected file
// below it is refused whole (the file's code), and one that is not empty
// is refused anyway: "If there's a policy set on a container with
// hierarchical namespace enabled, a directory must be empty before it
// can be deleted" (container-level WORM page, Deletion), answered as a
// delete of a non-empty directory without recursive is, 409
// DirectoryNotEmpty (no public source names the code of this refusal:
// inferred).
func (w *containerWORM) refusePathDelete(tx kv.Tx, hns *ns.Namespace, fs ns.FS, n *ns.Node, now time.Time) error {
	if w.empty() {
		return nil
	}
	if err := w.refuseSubtree(tx, hns, fs, n, wormDelete, now); err != nil || !n.Dir {
		return err
	}
	empty, err := hns.Empty(tx, fs, n)
	if err != nil {
		return err
	}
	if !empty {
		return azerr.New(azerr.DirectoryNotEmpty)
	}
	return nil
}
