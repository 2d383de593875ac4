package wire

import (
	"bytes"
	"encoding/xml"
	"io"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// MaxBlockListEntries is the maximum number of entries in a Put Block List
// body (Blob service error codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes:
// BlockListTooLong, "The block list may not contain more than 50,000
// blocks").
const MaxBlockListEntries = 50000

// BlockKind says where Put Block List looks a block up (Put Block List,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block-list).
type BlockKind uint8

const (
	// Committed: only among the blob's committed blocks.
	Committed BlockKind = iota + 1
	// Uncommitted: only among the uncommitted blocks.
	Uncommitted
	// Latest: the uncommitted block if there is one, else the committed one.
	Latest
)

// String returns the XML element name of the kind.
func (k BlockKind) String() string {
	switch k {
	case Committed:
		return "Committed"
	case Uncommitted:
		return "Uncommitted"
	case Latest:
		return "Latest"
	}
	return "BlockKind(" + strconv.Itoa(int(k)) + ")"
}

// BlockRef is one entry of a Put Block List body.
type BlockRef struct {
	// ID is the base64 block ID as sent, with surrounding XML whitespace
	// trimmed. It is not validated: an ID that is not valid base64 cannot
	// match a stored block, so the caller's lookup fails with 400
	// InvalidBlockList.
	ID   string
	Kind BlockKind
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseBlockList parses a Put Block List body:
//
//	<?xml version="1.0" encoding="utf-8"?>
//	<BlockList><Committed>id</Committed><Uncommitted>id</Uncommitted><Latest>id</Latest></BlockList>
//
// Entries are returned in document order across the three element kinds; that
// order is the new blob content (Put Block List,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-block-list).
// (azblob groups its entries as Committed, Latest, Uncommitted; other clients
// interleave.) An empty <BlockList/> is valid and yields no entries.
//
// Errors: 400 InvalidXmlDocument for an empty body, malformed XML, a root
// other than BlockList, an unknown or nested element, non-whitespace text
// outside the entries, or content after the root (Common REST API error
// codes,
// https://learn.microsoft.com/en-us/rest/api/storageservices/common-rest-api-error-codes;
// Azure/Azurite#1955 for non-XML bodies); 400 BlockListTooLong for more than
// 50,000 entries (detected while parsing, so a huge body is not buffered into
// refs) (Put Block List). A leading UTF-8 BOM is skipped, as .NET writers
// emit one (inferred). Element names match case-sensitively and namespaces
// are ignored.
func ParseBlockList(body []byte) ([]BlockRef, error) {
	body = bytes.TrimPrefix(body, utf8BOM)
	dec := xml.NewDecoder(bytes.NewReader(body))
	dec.Strict = true

	var refs []BlockRef
	depth := 0         // 0 outside root, 1 inside BlockList, 2 inside an entry
	var kind BlockKind // kind of the open entry at depth 2
	var text strings.Builder
	sawRoot := false

	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, invalidXML()
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch depth {
			case 0:
				if sawRoot || t.Name.Local != "BlockList" {
					return nil, invalidXML()
				}
				sawRoot = true
			case 1:
				switch t.Name.Local {
				case "Committed":
					kind = Committed
				case "Uncommitted":
					kind = Uncommitted
				case "Latest":
					kind = Latest
				default:
					return nil, invalidXML()
				}
				if len(refs) == MaxBlockListEntries {
					return nil, azerr.New(azerr.BlockListTooLong)
				}
				text.Reset()
			default:
				return nil, invalidXML()
			}
			depth++
		case xml.EndElement:
			// encoding/xml (Strict) guarantees matching start/end tags.
			if depth == 2 {
				refs = append(refs, BlockRef{ID: strings.Trim(text.String(), xmlSpace), Kind: kind})
			}
			depth--
		case xml.CharData:
			if depth == 2 {
				text.Write(t)
			} else if len(bytes.Trim(t, xmlSpace)) != 0 {
				return nil, invalidXML()
			}
		case xml.Comment, xml.ProcInst:
			// Allowed anywhere (the declaration is a ProcInst).
		case xml.Directive:
			// <!DOCTYPE ...>: not expected from any client.
			return nil, invalidXML()
		}
	}
	if !sawRoot || depth != 0 {
		return nil, invalidXML()
	}
	if refs == nil {
		refs = []BlockRef{}
	}
	return refs, nil
}

const xmlSpace = " \t\r\n"

func invalidXML() *azerr.Error { return azerr.New(azerr.InvalidXMLDocument) }

// BlockListType is the blocklisttype query parameter of Get Block List.
type BlockListType uint8

const (
	BlockListCommitted BlockListType = iota + 1
	BlockListUncommitted
	BlockListAll
)

// ParseBlockListType parses the blocklisttype query value: committed (the
// default when empty), uncommitted or all, case-insensitively (Get Block
// List,
// https://learn.microsoft.com/en-us/rest/api/storageservices/get-block-list;
// azblob sends the lower-case names). Anything else is 400
// InvalidQueryParameterValue (inferred).
func ParseBlockListType(v string) (BlockListType, error) {
	switch strings.ToLower(v) {
	case "", "committed":
		return BlockListCommitted, nil
	case "uncommitted":
		return BlockListUncommitted, nil
	case "all":
		return BlockListAll, nil
	}
	return 0, azerr.InvalidQuery("blocklisttype", v)
}

// BlockInfo is one block in a Get Block List response.
type BlockInfo struct {
	Name string // base64 block ID
	Size int64
}

// BlockListXML renders a Get Block List response body. The sections written
// follow the requested type, matching recorded real-service bodies
// (azure-sdk-for-js recordings): committed → only <CommittedBlocks>;
// uncommitted → only <UncommittedBlocks>; all → both. An empty section is
// written self-closed, e.g. <UncommittedBlocks />:
//
//	<?xml version="1.0" encoding="utf-8"?><BlockList><CommittedBlocks><Block><Name>Mg==</Name><Size>10</Size></Block></CommittedBlocks><UncommittedBlocks /></BlockList>
func BlockListXML(t BlockListType, committed, uncommitted []BlockInfo) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><BlockList>`)
	if t == BlockListCommitted || t == BlockListAll {
		writeBlocks(&b, "CommittedBlocks", committed)
	}
	if t == BlockListUncommitted || t == BlockListAll {
		writeBlocks(&b, "UncommittedBlocks", uncommitted)
	}
	b.WriteString(`</BlockList>`)
	return b.Bytes()
}

func writeBlocks(b *bytes.Buffer, section string, blocks []BlockInfo) {
	if len(blocks) == 0 {
		b.WriteString("<" + section + " />")
		return
	}
	b.WriteString("<" + section + ">")
	for _, bl := range blocks {
		b.WriteString("<Block><Name>")
		escapeXML(b, bl.Name)
		b.WriteString("</Name><Size>")
		b.WriteString(strconv.FormatInt(bl.Size, 10))
		b.WriteString("</Size></Block>")
	}
	b.WriteString("</" + section + ">")
}

func escapeXML(b *bytes.Buffer, s string) {
	b.Write(AppendXMLText(b.AvailableBuffer(), s))
}
