package wire

import (
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

const xmlDecl = `<?xml version="1.0" encoding="utf-8"?>`

func TestParseBlockList(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []BlockRef
		code string
	}{
		{"docs example", xmlDecl + `
<BlockList>
  <Committed>Zmlyc3Q=</Committed>
  <Uncommitted>c2Vjb25k</Uncommitted>
  <Latest>dGhpcmQ=</Latest>
</BlockList>`, []BlockRef{{"Zmlyc3Q=", Committed}, {"c2Vjb25k", Uncommitted}, {"dGhpcmQ=", Latest}}, ""},
		{"go sdk shape", xmlDecl + `<BlockList><Latest>MQ==</Latest><Latest>Mg==</Latest></BlockList>`,
			[]BlockRef{{"MQ==", Latest}, {"Mg==", Latest}}, ""},
		{"interleaved order kept", `<BlockList><Latest>a</Latest><Committed>b</Committed><Latest>c</Latest><Uncommitted>d</Uncommitted><Committed>e</Committed></BlockList>`,
			[]BlockRef{{"a", Latest}, {"b", Committed}, {"c", Latest}, {"d", Uncommitted}, {"e", Committed}}, ""},
		{"no declaration", `<BlockList><Committed>MQ==</Committed></BlockList>`, []BlockRef{{"MQ==", Committed}}, ""},
		{"bom", "\xEF\xBB\xBF" + xmlDecl + `<BlockList><Latest>MQ==</Latest></BlockList>`, []BlockRef{{"MQ==", Latest}}, ""},
		{"empty list", xmlDecl + `<BlockList></BlockList>`, []BlockRef{}, ""},
		{"self-closed list", `<BlockList/>`, []BlockRef{}, ""},
		{"whitespace in id trimmed", "<BlockList><Latest>\n  MQ==\n</Latest></BlockList>", []BlockRef{{"MQ==", Latest}}, ""},
		{"empty id kept", `<BlockList><Latest></Latest></BlockList>`, []BlockRef{{"", Latest}}, ""},
		{"comment", `<BlockList><!-- c --><Latest>MQ==</Latest></BlockList>`, []BlockRef{{"MQ==", Latest}}, ""},
		{"entity", `<BlockList><Latest>a&amp;b</Latest></BlockList>`, []BlockRef{{"a&b", Latest}}, ""},
		{"cdata", `<BlockList><Latest><![CDATA[MQ==]]></Latest></BlockList>`, []BlockRef{{"MQ==", Latest}}, ""},
		{"namespace ignored", `<BlockList xmlns="urn:x"><Latest>MQ==</Latest></BlockList>`, []BlockRef{{"MQ==", Latest}}, ""},
		{"empty body", ``, nil, azerr.InvalidXMLDocument},
		{"whitespace body", "  \n", nil, azerr.InvalidXMLDocument},
		{"json body (Azurite #1955)", `{"Latest":["MQ=="]}`, nil, azerr.InvalidXMLDocument},
		{"truncated", `<BlockList><Latest>MQ==</Latest>`, nil, azerr.InvalidXMLDocument},
		{"mismatched tags", `<BlockList><Latest>MQ==</Committed></BlockList>`, nil, azerr.InvalidXMLDocument},
		{"wrong root", `<Blocks><Latest>MQ==</Latest></Blocks>`, nil, azerr.InvalidXMLDocument},
		{"unknown element", `<BlockList><Block>MQ==</Block></BlockList>`, nil, azerr.InvalidXMLDocument},
		{"case matters", `<BlockList><latest>MQ==</latest></BlockList>`, nil, azerr.InvalidXMLDocument},
		{"nested element", `<BlockList><Latest><Name>MQ==</Name></Latest></BlockList>`, nil, azerr.InvalidXMLDocument},
		{"text at list level", `<BlockList>junk<Latest>MQ==</Latest></BlockList>`, nil, azerr.InvalidXMLDocument},
		{"two roots", `<BlockList/><BlockList/>`, nil, azerr.InvalidXMLDocument},
		{"trailing text", `<BlockList/>junk`, nil, azerr.InvalidXMLDocument},
		{"doctype", `<!DOCTYPE BlockList><BlockList/>`, nil, azerr.InvalidXMLDocument},
		{"unknown entity", `<BlockList><Latest>&foo;</Latest></BlockList>`, nil, azerr.InvalidXMLDocument},
		{"utf-16 declared", `<?xml version="1.0" encoding="utf-16"?><BlockList/>`, nil, azerr.InvalidXMLDocument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseBlockList([]byte(tc.body))
			checkErr(t, err, tc.code)
			if tc.code == "" && !slices.Equal(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func blockListBody(n int) []byte {
	var b strings.Builder
	b.WriteString(xmlDecl + "<BlockList>")
	for i := range n {
		fmt.Fprintf(&b, "<Latest>%08d</Latest>", i)
	}
	b.WriteString("</BlockList>")
	return []byte(b.String())
}

func TestParseBlockListLimit(t *testing.T) {
	refs, err := ParseBlockList(blockListBody(MaxBlockListEntries))
	checkErr(t, err, "")
	if len(refs) != MaxBlockListEntries || refs[49999].ID != "00049999" {
		t.Fatalf("len %d", len(refs))
	}
	_, err = ParseBlockList(blockListBody(MaxBlockListEntries + 1))
	checkErr(t, err, azerr.BlockListTooLong)
}

func TestBlockKindString(t *testing.T) {
	for k, want := range map[BlockKind]string{Committed: "Committed", Uncommitted: "Uncommitted", Latest: "Latest", 0: "BlockKind(0)"} {
		if got := k.String(); got != want {
			t.Errorf("%d: %q want %q", k, got, want)
		}
	}
}

func TestParseBlockListType(t *testing.T) {
	tests := []struct {
		in   string
		want BlockListType
		code string
	}{
		{"", BlockListCommitted, ""},
		{"committed", BlockListCommitted, ""},
		{"Uncommitted", BlockListUncommitted, ""},
		{"ALL", BlockListAll, ""},
		{"latest", 0, azerr.InvalidQueryParameterValue},
	}
	for _, tc := range tests {
		got, err := ParseBlockListType(tc.in)
		checkErr(t, err, tc.code)
		if got != tc.want {
			t.Errorf("%q: got %d want %d", tc.in, got, tc.want)
		}
	}
}

func TestBlockListXML(t *testing.T) {
	c := []BlockInfo{{"MQ==", 10}, {"Mg==", 10}}
	u := []BlockInfo{{"Mw==", 4194304}}
	tests := []struct {
		name string
		t    BlockListType
		c, u []BlockInfo
		want string
	}{
		// Recorded real-service bodies (azure-sdk-for-js nock recordings).
		{"committed only", BlockListCommitted, c, u,
			xmlDecl + `<BlockList><CommittedBlocks><Block><Name>MQ==</Name><Size>10</Size></Block><Block><Name>Mg==</Name><Size>10</Size></Block></CommittedBlocks></BlockList>`},
		{"all, none uncommitted", BlockListAll, c[1:], nil,
			xmlDecl + `<BlockList><CommittedBlocks><Block><Name>Mg==</Name><Size>10</Size></Block></CommittedBlocks><UncommittedBlocks /></BlockList>`},
		{"uncommitted only", BlockListUncommitted, c, u,
			xmlDecl + `<BlockList><UncommittedBlocks><Block><Name>Mw==</Name><Size>4194304</Size></Block></UncommittedBlocks></BlockList>`},
		{"all empty", BlockListAll, nil, nil,
			xmlDecl + `<BlockList><CommittedBlocks /><UncommittedBlocks /></BlockList>`},
		{"escaped", BlockListCommitted, []BlockInfo{{"<&>", 1}}, nil,
			xmlDecl + `<BlockList><CommittedBlocks><Block><Name>&lt;&amp;&gt;</Name><Size>1</Size></Block></CommittedBlocks></BlockList>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(BlockListXML(tc.t, tc.c, tc.u))
			if got != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestBlockListXMLDecodesLikeSDK decodes the writer's output with the same
// struct shape azblob uses (CommittedBlocks>Block, UncommittedBlocks>Block).
func TestBlockListXMLDecodesLikeSDK(t *testing.T) {
	type block struct {
		Name string
		Size int64
	}
	var got struct {
		Committed   []block `xml:"CommittedBlocks>Block"`
		Uncommitted []block `xml:"UncommittedBlocks>Block"`
	}
	body := BlockListXML(BlockListAll, []BlockInfo{{"MQ==", 1}}, []BlockInfo{{"Mg==", 2}, {"Mw==", 3}})
	if err := xml.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Committed) != 1 || got.Committed[0] != (block{"MQ==", 1}) || len(got.Uncommitted) != 2 || got.Uncommitted[1] != (block{"Mw==", 3}) {
		t.Fatalf("decoded %+v", got)
	}
}
