package server

import "strings"

// Path is what a request's URL path addresses: the resource level of the
// service's route table it is at, and the names at that level.
type Path struct {
	// Level is one bit of the service's levels; 0 when the path
	// addresses nothing the service has (a sub-path Paths does not
	// list), which the service answers with its own URL error.
	Level Level
	// First is the container, share, queue or filesystem; Rest the path
	// after it as sent (a blob or file path, Queue's "messages/{id}").
	First, Rest string
	// Item is the last segment of a Sub's item form ("messages/{id}":
	// the id).
	Item string
}

// Paths is how a service's URL paths, /{account}[/{first}[/{rest}]],
// map to the levels of its route table. The middleware put the account
// first for a production-style URL; the path is the decoded one. Every
// front end whose URLs have this shape (Blob, File, Queue, Data Lake)
// splits them here; Table's OData URLs ("Tables('t')", "t(PartitionKey=
// ...)") are parsed by its own front end.
type Paths struct {
	// Account, First and Rest are the levels of a path without a first
	// name, with one and no rest, and with a rest.
	Account, First, Rest Level
	// Subs, when set, are the only paths below a first name (Queue:
	// messages, messages/{id}); Rest is then unused.
	Subs []SubPath
	// Trim: slashes around the rest are not part of it (a Data Lake
	// path: "fs/dir/" is the directory "dir", "fs/" the filesystem).
	Trim bool
}

// SubPath is a fixed name below a first name, and its item form.
type SubPath struct {
	Name string
	// Level is the level of {first}/{Name}; Item, of {first}/{Name}/{item}
	// (item non-empty, without '/'); 0 for a form the service lacks.
	Level, Item Level
}

// Split reads r's URL path.
func (p *Paths) Split(r *Request) Path {
	path := strings.TrimPrefix(r.URL.Path, "/")
	i := strings.IndexByte(path, '/')
	if i < 0 {
		return Path{Level: p.Account}
	}
	first, rest, _ := strings.Cut(path[i+1:], "/")
	if first == "" {
		return Path{Level: p.Account}
	}
	if p.Trim {
		rest = strings.Trim(rest, "/")
	}
	out := Path{First: first, Rest: rest}
	switch {
	case rest == "":
		out.Level = p.First
	case p.Subs == nil:
		out.Level = p.Rest
	default:
		name, item, hasItem := strings.Cut(rest, "/")
		for _, s := range p.Subs {
			if s.Name != name {
				continue
			}
			switch {
			case !hasItem:
				out.Level = s.Level
			case item != "" && !strings.Contains(item, "/"):
				out.Level, out.Item = s.Item, item
			}
			break
		}
	}
	return out
}
