// Package svcprops is the Get/Set Service Properties document shared by
// the Blob, Queue, Table and File services (StorageServiceProperties:
// logging, metrics, CORS, for Blob the default version, delete retention
// and static website, for File the share delete retention and protocol
// settings). On Set every top-level element is optional and an
// absent one keeps its previous value; writes are last writer wins.
//
// Service is the one implementation of Get/Set Service Properties and
// Get Service Stats every service uses, parameterised by Kind;
// internal/svcpropsrest is its REST front end. The package
// knows no HTTP (internal/archtest).
package svcprops

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// Kind selects the elements a service supports (see elements).
type Kind int

// Services with service properties.
const (
	Blob Kind = iota
	Queue
	Table
	File
)

// MaxCORSRules is Azure's limit of CORS rules per service.
const MaxCORSRules = 5

// maxBody bounds a Set Service Properties body.
const maxBody = 64 << 10

// Retention is a retention policy.
type Retention struct {
	Enabled bool `xml:"Enabled" json:"e"`
	Days    *int `xml:"Days,omitempty" json:"d,omitempty"`
	// AllowPermanentDelete only appears in DeleteRetentionPolicy.
	AllowPermanentDelete *bool `xml:"AllowPermanentDelete,omitempty" json:"p,omitempty"`
}

// Logging is the analytics logging setting.
type Logging struct {
	Version         string    `xml:"Version" json:"v"`
	Delete          bool      `xml:"Delete" json:"d"`
	Read            bool      `xml:"Read" json:"r"`
	Write           bool      `xml:"Write" json:"w"`
	RetentionPolicy Retention `xml:"RetentionPolicy" json:"rp"`
}

// Metrics is an hour or minute metrics setting.
type Metrics struct {
	Version         string    `xml:"Version" json:"v"`
	Enabled         bool      `xml:"Enabled" json:"e"`
	IncludeAPIs     *bool     `xml:"IncludeAPIs,omitempty" json:"i,omitempty"`
	RetentionPolicy Retention `xml:"RetentionPolicy" json:"rp"`
}

// CORSRule is one CORS rule.
type CORSRule struct {
	AllowedOrigins  string `xml:"AllowedOrigins" json:"o"`
	AllowedMethods  string `xml:"AllowedMethods" json:"m"`
	AllowedHeaders  string `xml:"AllowedHeaders" json:"h"`
	ExposedHeaders  string `xml:"ExposedHeaders" json:"x"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds" json:"a"`
}

// CORS holds a service's CORS rules.
type CORS struct {
	Rules []CORSRule `xml:"CorsRule" json:"r"`
}

// StaticWebsite is the Blob service's static website setting.
type StaticWebsite struct {
	Enabled              bool   `xml:"Enabled" json:"e"`
	IndexDocument        string `xml:"IndexDocument,omitempty" json:"i,omitempty"`
	ErrorDocument404Path string `xml:"ErrorDocument404Path,omitempty" json:"n,omitempty"`
	DefaultIndexPath     string `xml:"DefaultIndexDocumentPath,omitempty" json:"d,omitempty"`
}

// RawXML is an element kept verbatim: its inner XML as it was set. File's
// ProtocolSettings (SMB versions, channel encryption, multichannel, NFS
// encryption in transit...) grows with every service version, so it is
// round-tripped instead of modelled.
type RawXML struct {
	Inner string `xml:",innerxml" json:"x"`
}

// Properties is the StorageServiceProperties document.
type Properties struct {
	XMLName               xml.Name       `xml:"StorageServiceProperties" json:"-"`
	Logging               *Logging       `xml:"Logging,omitempty" json:"l,omitempty"`
	HourMetrics           *Metrics       `xml:"HourMetrics,omitempty" json:"hm,omitempty"`
	MinuteMetrics         *Metrics       `xml:"MinuteMetrics,omitempty" json:"mm,omitempty"`
	Cors                  *CORS          `xml:"Cors,omitempty" json:"c,omitempty"`
	DefaultServiceVersion *string        `xml:"DefaultServiceVersion,omitempty" json:"dv,omitempty"`
	DeleteRetentionPolicy *Retention     `xml:"DeleteRetentionPolicy,omitempty" json:"dr,omitempty"`
	StaticWebsite         *StaticWebsite `xml:"StaticWebsite,omitempty" json:"sw,omitempty"`
	// File only.
	ShareDeleteRetentionPolicy *Retention `xml:"ShareDeleteRetentionPolicy,omitempty" json:"sdr,omitempty"`
	ProtocolSettings           *RawXML    `xml:"ProtocolSettings,omitempty" json:"ps,omitempty"`
}

// Default returns the properties of a service that never had them set.
func Default(k Kind) Properties {
	p := Properties{
		Logging:       &Logging{Version: "1.0"},
		HourMetrics:   &Metrics{Version: "1.0"},
		MinuteMetrics: &Metrics{Version: "1.0"},
		Cors:          &CORS{},
	}
	e := k.elements()
	if !e.logging {
		p.Logging = nil
	}
	if e.blob {
		p.DeleteRetentionPolicy = &Retention{}
		p.StaticWebsite = &StaticWebsite{}
	}
	if e.file {
		// Share soft delete is off unless set (or the server's
		// --share-soft-delete, which internal/file applies); SMB
		// Multichannel is off.
		p.ShareDeleteRetentionPolicy = &Retention{}
		p.ProtocolSettings = &RawXML{Inner: "<SMB><Multichannel><Enabled>false</Enabled></Multichannel></SMB>"}
	}
	return p
}

// CheckLength refuses a declared body length over the 64 KiB cap at once
// (413 RequestBodyTooLarge), before any of the body is waited for.
func CheckLength(n int64) error {
	if n > maxBody {
		return azerr.New(azerr.RequestBodyTooLarge)
	}
	return nil
}

// Parse reads and validates a Set Service Properties body: malformed XML,
// more than five CORS rules, or retention days outside 1–365 on an
// enabled policy are 400 InvalidXmlDocument; a body over 64 KiB is 413.
// Elements the service does not have are dropped.
func Parse(body io.Reader, k Kind) (Properties, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxBody+1))
	if err != nil {
		return Properties{}, fmt.Errorf("reading service properties: %w", err)
	}
	if len(raw) > maxBody {
		return Properties{}, azerr.New(azerr.RequestBodyTooLarge)
	}
	var in Properties
	if err := xml.Unmarshal(raw, &in); err != nil || in.XMLName.Local != "StorageServiceProperties" {
		return Properties{}, azerr.New(azerr.InvalidXMLDocument)
	}
	if in.Cors != nil && len(in.Cors.Rules) > MaxCORSRules {
		return Properties{}, azerr.Newf(azerr.InvalidXMLDocument, "At most %d CORS rules may be set.", MaxCORSRules)
	}
	k.keepOwn(&in)
	policies := []*Retention{in.DeleteRetentionPolicy, in.ShareDeleteRetentionPolicy}
	if in.Logging != nil {
		policies = append(policies, &in.Logging.RetentionPolicy)
	}
	for _, m := range []*Metrics{in.HourMetrics, in.MinuteMetrics} {
		if m != nil {
			policies = append(policies, &m.RetentionPolicy)
		}
	}
	for _, rp := range policies {
		if rp != nil && rp.Enabled && (rp.Days == nil || *rp.Days < 1 || *rp.Days > 365) {
			return Properties{}, azerr.Newf(azerr.InvalidXMLDocument, "Retention days must be between 1 and 365.")
		}
	}
	return in, nil
}

// Merge sets every element present in in.
func (p *Properties) Merge(in Properties) {
	replace(&p.Logging, in.Logging)
	replace(&p.HourMetrics, in.HourMetrics)
	replace(&p.MinuteMetrics, in.MinuteMetrics)
	replace(&p.Cors, in.Cors)
	replace(&p.DefaultServiceVersion, in.DefaultServiceVersion)
	replace(&p.DeleteRetentionPolicy, in.DeleteRetentionPolicy)
	replace(&p.StaticWebsite, in.StaticWebsite)
	replace(&p.ShareDeleteRetentionPolicy, in.ShareDeleteRetentionPolicy)
	replace(&p.ProtocolSettings, in.ProtocolSettings)
}

// replace sets *dst to src when the request has the element.
func replace[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}

// Load reads the properties stored under key, or the defaults.
func Load(tx kv.Tx, key []byte, k Kind) (Properties, error) {
	p := Default(k)
	raw, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, fmt.Errorf("decoding service properties: %w", err)
	}
	return p, nil
}

// LoadDeleteRetention reads the DeleteRetentionPolicy of the properties
// stored under key alone (nil: none stored, which is Default's: off),
// for a write that needs nothing else of them.
func LoadDeleteRetention(tx kv.Tx, key []byte) (*Retention, error) {
	raw, err := tx.Get(key)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var doc struct {
		DeleteRetentionPolicy *Retention `json:"dr"` // as in Properties
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decoding service properties: %w", err)
	}
	return doc.DeleteRetentionPolicy, nil
}

// Get is Get Service Properties.
func Get(ctx context.Context, store kv.Store, key []byte, k Kind) (p Properties, err error) {
	err = store.View(ctx, func(tx kv.Tx) error {
		p, err = Load(tx, key, k)
		return err
	})
	return p, err
}

// SetParsed merges in (from Parse) into the stored document in one
// transaction: Set Service Properties (Service.SetProperties).
func SetParsed(ctx context.Context, store kv.Store, key []byte, k Kind, in Properties) error {
	err := store.Update(ctx, func(tx kv.Tx) error {
		p, err := Load(tx, key, k)
		if err != nil {
			return err
		}
		p.Merge(in)
		raw, err := json.Marshal(&p)
		if err != nil {
			return err
		}
		return tx.Put(key, raw)
	})
	cors.forget(store, key)
	return err
}

// Stats is the Get Service Stats document. A single-site server is always
// in sync with itself.
type Stats struct {
	XMLName xml.Name `xml:"StorageServiceStats"`
	Status  string   `xml:"GeoReplication>Status"`
	Sync    string   `xml:"GeoReplication>LastSyncTime"`
}

// LiveStats returns the stats document for a request at now.
func LiveStats(now time.Time) Stats {
	return Stats{Status: "live", Sync: now.UTC().Format(rfc1123GMT)}
}

// rfc1123GMT is net/http's TimeFormat, the RFC 1123 date LastSyncTime is
// written in; spelled out so the domain packages that keep service
// properties do not link net/http through this package.
const rfc1123GMT = "Mon, 02 Jan 2006 15:04:05 GMT"

// CORSRules returns the CORS rules stored under key. Every GET and HEAD
// of a service needs them (Vary: Origin is sent whenever the service has
// rules), so they are kept for CORSCacheTTL instead of costing each such
// request a transaction of its own (a round trip on PostgreSQL). Set on
// this process drops the copy at once; other front ends sharing a
// database see a change within CORSCacheTTL (inferred as acceptable:
// rules are configuration, not data, and no operation's outcome but the
// CORS headers depends on them).
func CORSRules(ctx context.Context, store kv.Store, key []byte, k Kind) ([]CORSRule, error) {
	now := time.Now()
	if rules, ok := cors.get(store, key, now); ok {
		return rules, nil
	}
	gen := cors.generation()
	p, err := Get(ctx, store, key, k)
	if err != nil {
		return nil, err
	}
	var rules []CORSRule
	if p.Cors != nil {
		rules = p.Cors.Rules
	}
	cors.put(store, key, rules, now, gen)
	return rules, nil
}

// CORSCacheTTL is how long CORSRules keeps an account's rules.
var CORSCacheTTL = time.Second

// cors is the cache of CORSRules, by store and properties key.
var cors = &corsCache{m: map[corsKey]corsEntry{}}

type corsKey struct {
	store kv.Store
	key   string
}

type corsEntry struct {
	rules []CORSRule
	at    time.Time
}

// corsCache's generation counts Sets: rules read before a Set finished
// are not kept after it.
type corsCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[corsKey]corsEntry
}

func (c *corsCache) get(store kv.Store, key []byte, now time.Time) ([]CORSRule, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[corsKey{store, string(key)}]
	if !ok || now.Sub(e.at) >= CORSCacheTTL || now.Before(e.at) {
		return nil, false
	}
	return e.rules, true
}

func (c *corsCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *corsCache) put(store kv.Store, key []byte, rules []CORSRule, at time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.m[corsKey{store, string(key)}] = corsEntry{rules, at}
	}
}

// forget drops key's rules and invalidates reads still in flight.
func (c *corsCache) forget(store kv.Store, key []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, corsKey{store, string(key)})
}

// elements is what a kind's document has beyond HourMetrics,
// MinuteMetrics and Cors, which every kind has, and whether the kind has
// Get Service Stats: all that differs between the services' Service
// Properties and Stats (their wire form, status codes and error codes
// are the same, InvalidXmlDocument for a body that is not a valid
// document; Table renders its errors in OData JSON, the front end's
// business).
type elements struct {
	// logging: Logging, which the File document lacks (Get File Service
	// Properties,
	// https://learn.microsoft.com/en-us/rest/api/storageservices/get-file-service-properties).
	logging bool
	// blob: DefaultServiceVersion, DeleteRetentionPolicy, StaticWebsite
	// (Set Blob Service Properties).
	blob bool
	// file: ShareDeleteRetentionPolicy and ProtocolSettings (SMB
	// multichannel and the rest, kept verbatim) (Set File Service
	// Properties).
	file bool
	// stats: Get Service Stats, the RA-GRS replication status of Blob,
	// Queue and Table; the File REST reference has no such operation.
	stats bool
}

func (k Kind) elements() elements {
	if k < 0 || int(k) >= len(kinds) {
		return elements{}
	}
	return kinds[k]
}

// keepOwn drops from p the elements kind k's document does not have.
func (k Kind) keepOwn(p *Properties) {
	e := k.elements()
	if !e.logging {
		p.Logging = nil
	}
	if !e.blob {
		p.DefaultServiceVersion, p.DeleteRetentionPolicy, p.StaticWebsite = nil, nil, nil
	}
	if !e.file {
		p.ShareDeleteRetentionPolicy, p.ProtocolSettings = nil, nil
	}
}

var kinds = [...]elements{
	Blob:  {logging: true, blob: true, stats: true},
	Queue: {logging: true, stats: true},
	Table: {logging: true, stats: true},
	File:  {file: true},
}
