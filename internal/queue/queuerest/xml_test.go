package queuerest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/wire"
)

func TestParseMessageXML(t *testing.T) {
	tests := []struct {
		name, body, want string
		ok               bool
	}{
		{"plain", "<QueueMessage><MessageText>hello</MessageText></QueueMessage>", "hello", true},
		{"sdk form", `<?xml version="1.0" encoding="UTF-8"?>` + "\n<QueueMessage><MessageText>a b</MessageText></QueueMessage>", "a b", true},
		{"escaped", "<QueueMessage><MessageText>&lt;x&gt; &amp; &quot;y&quot; &#x41;&#66;</MessageText></QueueMessage>", `<x> & "y" AB`, true},
		{"cdata", "<QueueMessage><MessageText><![CDATA[<raw>&]]></MessageText></QueueMessage>", "<raw>&", true},
		{"empty text", "<QueueMessage><MessageText></MessageText></QueueMessage>", "", true},
		{"self-closed text", "<QueueMessage><MessageText/></QueueMessage>", "", true},
		{"white space kept", "<QueueMessage><MessageText>  a\n b\t</MessageText></QueueMessage>", "  a\n b\t", true},
		{"carriage return as reference", "<QueueMessage><MessageText>a&#xD;b</MessageText></QueueMessage>", "a\rb", true},
		{"unicode", "<QueueMessage><MessageText>héllo 世界 🎉</MessageText></QueueMessage>", "héllo 世界 🎉", true},
		{"comments and spaces", "<!-- c --> <QueueMessage> <!-- d --> <MessageText>x<!-- e -->y</MessageText> </QueueMessage> \n", "xy", true},
		{"namespace", `<QueueMessage xmlns="urn:x"><MessageText>n</MessageText></QueueMessage>`, "n", true},
		{"unknown sibling ignored", "<QueueMessage><Other><Deep/></Other><MessageText>s</MessageText></QueueMessage>", "s", true},
		{"no MessageText", "<QueueMessage></QueueMessage>", "", false},
		{"two MessageText", "<QueueMessage><MessageText>a</MessageText><MessageText>b</MessageText></QueueMessage>", "", false},
		{"element in text", "<QueueMessage><MessageText>a<b/>c</MessageText></QueueMessage>", "", false},
		{"wrong root", "<Message><MessageText>a</MessageText></Message>", "", false},
		{"unclosed", "<QueueMessage><MessageText>a</MessageText>", "", false},
		{"mismatched", "<QueueMessage><MessageText>a</QueueMessage></MessageText>", "", false},
		{"two roots", "<QueueMessage><MessageText>a</MessageText></QueueMessage><QueueMessage/>", "", false},
		{"text after root", "<QueueMessage><MessageText>a</MessageText></QueueMessage>junk", "", false},
		{"text before root", "junk<QueueMessage><MessageText>a</MessageText></QueueMessage>", "", false},
		{"unknown entity", "<QueueMessage><MessageText>&nbsp;</MessageText></QueueMessage>", "", false},
		{"bare ampersand", "<QueueMessage><MessageText>a & b</MessageText></QueueMessage>", "", false},
		{"doctype", `<!DOCTYPE x [<!ENTITY e "boom">]><QueueMessage><MessageText>&e;</MessageText></QueueMessage>`, "", false},
		{"invalid utf-8", "<QueueMessage><MessageText>\xff</MessageText></QueueMessage>", "", false},
		{"control character", "<QueueMessage><MessageText>\x01</MessageText></QueueMessage>", "", false},
		{"not xml", "hello", "", false},
		{"json", `{"MessageText":"a"}`, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMessageXML([]byte(tc.body))
			if tc.ok != (err == nil) {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := parseMessageXML([]byte("<QueueMessage/>")); !errors.Is(err, errNoMessageText) {
		t.Errorf("missing MessageText: %v", err)
	}
}

func TestReadMessageBody(t *testing.T) {
	big := strings.Repeat("a", maxMessageBytes)
	tests := []struct {
		name     string
		body     string
		optional bool
		want     string
		present  bool
		code     string
	}{
		{"ok", string(buildMessageXML("x")), false, "x", true, ""},
		{"64 KiB", string(buildMessageXML(big)), false, big, true, ""},
		{"64 KiB + 1", string(buildMessageXML(big + "b")), false, "", false, "RequestBodyTooLarge"},
		{"64 KiB of multibyte", string(buildMessageXML(strings.Repeat("é", maxMessageBytes/2+1))), false, "", false, "RequestBodyTooLarge"},
		{"huge escaped body", string(buildMessageXML(strings.Repeat(`"`, maxBodyBytes))), false, "", false, "RequestBodyTooLarge"},
		{"empty required", "", false, "", false, "InvalidXmlDocument"},
		{"empty optional", " \n", true, "", false, ""},
		{"malformed", "<QueueMessage>", false, "", false, "InvalidXmlDocument"},
		{"no text", "<QueueMessage/>", true, "", false, "InvalidXmlDocument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "http://x/a/q/messages", strings.NewReader(tc.body))
			got, present, err := readMessageBody(r, tc.optional)
			wantCode(t, err, tc.code)
			if got != tc.want || present != tc.present {
				t.Errorf("got %d bytes, present=%v; want %d bytes, present=%v", len(got), present, len(tc.want), tc.present)
			}
		})
	}
}

// FuzzParseMessageXML checks that the parser never panics, that whatever
// it accepts is valid UTF-8 and survives a round trip through the body
// a client would build for it, and that every text a client can send is
// read back unchanged.
func FuzzParseMessageXML(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n<QueueMessage><MessageText>hello</MessageText></QueueMessage>",
		"<QueueMessage><MessageText>&lt;&amp;&gt;&#xD;</MessageText></QueueMessage>",
		"<QueueMessage><MessageText><![CDATA[x]]></MessageText></QueueMessage>",
		"<QueueMessage><Other/><MessageText/></QueueMessage>",
		"<QueueMessage>",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`<?xml version="1.0" encoding="utf-8"?>` + "\n<QueueMessage><MessageText>aGVsbG8=</MessageText></QueueMessage>"))
	f.Add([]byte("<QueueMessage><MessageText>a\tb\nc</MessageText></QueueMessage>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The decoder-free path answers exactly as the decoder, for the
		// body and for the body wrapped as text.
		for _, body := range [][]byte{data, []byte(msgOpen + string(data) + msgClose)} {
			if plain, ok := plainMessageText(body); ok {
				if dec, err := decodeMessageXML(body); err != nil || dec != plain {
					t.Fatalf("body %q: plain path %q, decoder %q, %v", body, plain, dec, err)
				}
			}
		}
		text, err := parseMessageXML(data)
		if err == nil {
			if !utf8.ValidString(text) {
				t.Fatalf("accepted invalid UTF-8 %q", text)
			}
			again, err := parseMessageXML(buildMessageXML(text))
			if err != nil || again != text {
				t.Fatalf("round trip of %q: %q, %v", text, again, err)
			}
		}
		// Any valid text a client sends comes back unchanged, unless it
		// holds characters XML cannot carry.
		s := string(data)
		if utf8.ValidString(s) && xmlSafe(s) {
			got, err := parseMessageXML(buildMessageXML(s))
			if err != nil || got != s {
				t.Fatalf("client text %q: got %q, %v", s, got, err)
			}
		}
	})
}

// xmlSafe reports whether every rune of s is an XML 1.0 character.
func xmlSafe(s string) bool {
	for _, r := range s {
		if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return false
		}
	}
	return true
}

func TestMessageXMLOutput(t *testing.T) {
	d := uint64(2)
	text := "a<b>&\r\n\"c\""
	l := messagesListXML{Items: []messageXML{{
		MessageID: "id", InsertionTime: "i", ExpirationTime: "e", PopReceipt: "p", TimeNextVisible: "v",
		DequeueCount: &d, MessageText: &text,
	}}}
	out := l.appendXML(nil)
	want := "<QueueMessagesList><QueueMessage><MessageId>id</MessageId><InsertionTime>i</InsertionTime><ExpirationTime>e</ExpirationTime>" +
		"<PopReceipt>p</PopReceipt><TimeNextVisible>v</TimeNextVisible><DequeueCount>2</DequeueCount>" +
		"<MessageText>a&lt;b&gt;&amp;&#xD;\n\"c\"</MessageText></QueueMessage></QueueMessagesList>"
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	// What the service writes, a client reads back exactly.
	var back struct {
		Items []struct {
			Text string `xml:"MessageText"`
		} `xml:"QueueMessage"`
	}
	if err := xml.NewDecoder(bytes.NewReader(out)).Decode(&back); err != nil || len(back.Items) != 1 || back.Items[0].Text != text {
		t.Errorf("read back %+v, %v", back, err)
	}
}

// writeMessages renders by hand what WriteXML renders (xml.Marshal, then
// wire.TidyXML): the same bytes for any text (escapes, control characters, invalid UTF-8) and any mix of
// present and absent elements.
func TestMessagesXMLMatchesMarshal(t *testing.T) {
	for _, text := range []string{"", "plain", "a<b>&'\"", "\t\r\n", "\x00\x1f\x7f", "\xff\xfe", "\uFFFD", "é日本\U0001F600", "\uFFFE"} {
		checkMessagesXML(t, text, 3)
	}
}

func FuzzMessagesXML(f *testing.F) {
	f.Add("a<b>&\r\n", uint8(0))
	f.Add("\xff", uint8(7))
	f.Fuzz(checkMessagesXML)
}

func checkMessagesXML(t *testing.T, text string, mask uint8) {
	var l messagesListXML
	for i := range 3 {
		d := uint64(i) * 1000
		m := messageXML{MessageID: text + "id", InsertionTime: "Sun, 22 Nov 2026 12:00:00 GMT", ExpirationTime: "x"}
		if mask&1 != 0 {
			m.PopReceipt, m.TimeNextVisible = "AgAAAAMAAAAAAAAA+/=", text
		}
		if mask&2 != 0 {
			m.DequeueCount = &d
		}
		if mask&4 != 0 {
			m.MessageText = &text
		}
		l.Items = append(l.Items, m)
		mask = mask>>1 | mask<<7
	}
	want, err := xml.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want = wire.TidyXML(want)
	if got := l.appendXML(nil); !bytes.Equal(got, want) {
		t.Errorf("text %q:\ngot  %s\nwant %s", text, got, want)
	}
	if got := (&messagesListXML{}).appendXML(nil); string(got) != "<QueueMessagesList></QueueMessagesList>" {
		t.Errorf("empty list: %s", got)
	}
}
