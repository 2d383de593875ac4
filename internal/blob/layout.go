package blob

import (
	"errors"

	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

func (s *Service) setLayouts(n *ns.Namespace, hier func(account string) bool) {
	s.layouts = layouts{flat: &flatLayout{s: s, ns: n}, isHier: hier}
	if n != nil && hier != nil {
		s.layouts.hier = &hierLayout{s: s, ns: n}
	}
}

// detachFilesystem detaches the tree of ref's filesystem, if it has one.
func detachFilesystem(n *ns.Namespace, tx kv.Tx, ref ContainerRef) error {
	err := n.DeleteFilesystem(tx, fsOfContainer(ref))
	if errors.Is(err, ns.ErrFilesystemNotFound) {
		return nil
	}
	return err
}

func fsOfContainer(ref ContainerRef) ns.FS {
	return ns.FS{Account: ref.Account, Filesystem: ref.Container}
}

// layoutOf is account's layout: hierarchical when SetNamespace's hier
// reports it, else flat. It is the one place the choice is made.
func (s *Service) layoutOf(account string) Layout {
	if s.layouts.hier != nil && s.layouts.isHier(account) {
		return s.layouts.hier
	}
	return s.layouts.flat
}

// nsOf is the namespace of account, nil when it is flat.
func (s *Service) nsOf(account string) *ns.Namespace {
	if l, ok := s.layoutOf(account).(*hierLayout); ok {
		return l.ns
	}
	return nil
}
