package cursor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/extracttest"
	"github.com/pos-lake/pos/internal/testfs"
	"github.com/pos-lake/pos/schema"
)

const cLong = "cccccccc-cccc-4ccc-8ccc-cccccccccccc" // a conversation of many pages

// damagedFixture writes the fixture's global database with a long
// conversation after its rows, so that it spans many pages: its
// composerData row first, then 300 bubbles of ~1.2 KB.
func damagedFixture(t *testing.T, path string) (rows int) {
	list := globalRows()
	var headers []obj
	var bubbles []kvRow
	for i := range 300 {
		id := fmt.Sprintf("b%03d", i)
		typ := 1 + i%2
		headers = append(headers, obj{"bubbleId": id, "type": typ})
		bubbles = append(bubbles, bubbleRow(cLong, obj{"_v": 2, "type": typ, "bubbleId": id,
			"text": fmt.Sprintf("bubble %03d: %s", i, strings.Repeat("lorem ipsum ", 100))}))
	}
	list = append(list, kvRow{"cursorDiskKV", "composerData:" + cLong, js(obj{"_v": 3, "composerId": cLong, "name": "Long",
		"createdAt": ms(0, 0), "fullConversationHeadersOnly": headers, "conversationMap": obj{}})})
	list = append(list, bubbles...)
	writeDB(t, path, true, list)
	return len(list)
}

// rawKeys are the raw records of a run, by their row key and raw value,
// which do not depend on where the database is.
func rawKeys(t *testing.T, recs []*schema.Record) map[string]bool {
	keys := map[string]bool{}
	for _, r := range recs {
		if r.Kind != schema.KindRaw {
			continue
		}
		k := r.Source.Key + "\x00" + string(r.Raw)
		if keys[k] {
			t.Errorf("raw record %s twice", r.Source.Key)
		}
		keys[k] = true
	}
	return keys
}

// TestDamagedDatabase: a database cut short at any offset, or with a page
// in its middle overwritten, is not passed over whole: every whitelisted
// row SQLite can still read becomes the raw record it is in the intact
// database (never anything else, never a row off the whitelist), the
// conversation is rebuilt from the rows that read, and what could not be
// read is named (path:table: reason), counted as skipped.
func TestDamagedDatabase(t *testing.T) {
	dir := t.TempDir()
	intact := filepath.Join(dir, "intact", "state.vscdb")
	damagedFixture(t, intact)
	b, err := os.ReadFile(intact)
	if err != nil {
		t.Fatal(err)
	}
	whole := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{intact}})
	if len(whole.Skips) != 1 { // the fixture's composerData that is not JSON
		t.Fatalf("intact database: %v", whole.Skips)
	}
	want := rawKeys(t, whole.Recs)
	t.Logf("intact: %d bytes, %d raw records", len(b), len(want))

	check := func(name string, data []byte) (raws, msgs int, res extracttest.Result) { // msgs: with text
		t.Helper()
		p := filepath.Join(dir, name, "state.vscdb")
		testfs.WriteFile(t, p, data)
		res = extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{p}})
		got := rawKeys(t, res.Recs)
		for k := range got {
			if !want[k] {
				t.Errorf("%s: a raw record the intact database does not hold: %.200q", name, k)
			}
		}
		for _, r := range res.Recs {
			for _, s := range secrets {
				if strings.Contains(string(schema.AppendRecord(nil, r)), s) {
					t.Errorf("%s: %s read", name, s)
				}
			}
			if r.Kind == schema.KindMessage && r.Text != "" {
				msgs++
			}
		}
		damagedSeen := false
		for _, s := range res.Skips {
			if s.Path != p {
				t.Errorf("%s: reported %v", name, s)
			}
			damagedSeen = damagedSeen || strings.Contains(s.Err.Error(), "damaged database")
		}
		if len(got) < len(want) && !damagedSeen {
			t.Errorf("%s: %d of %d raw records, and no damage named: %v", name, len(got), len(want), res.Skips)
		}
		return len(got), msgs, res
	}

	// Cut short: at page boundaries and inside pages.
	prev := 0
	for _, frac := range []float64{0.2, 0.35, 0.5, 0.65, 0.8, 0.95} {
		for _, off := range []int{0, 1000} {
			cut := int(float64(len(b))*frac)/4096*4096 + off
			name := fmt.Sprintf("cut-%d", cut)
			raws, msgs, _ := check(name, b[:cut])
			t.Logf("%s: %d raw records, %d messages", name, raws, msgs)
			if raws == 0 || msgs == 0 {
				t.Errorf("%s: %d raw records, %d messages: nothing salvaged", name, raws, msgs)
			}
			if raws < prev {
				t.Errorf("%s: %d raw records, fewer than a shorter cut's %d", name, raws, prev)
			}
			prev = raws
		}
	}

	// A page in the middle overwritten: the rows after it are read.
	mid := append([]byte(nil), b...)
	page := len(b) / 4096 / 2
	clear(mid[page*4096 : (page+1)*4096])
	raws, _, res := check("zeroed", mid)
	last := false
	for _, r := range res.Recs {
		last = last || r.Kind == schema.KindRaw && strings.HasSuffix(r.Source.Key, ":b299")
	}
	if raws >= len(want) || !last {
		t.Errorf("zeroed page %d: %d of %d raw records, the last bubble read: %v; want the rows around the page", page, raws, len(want), last)
	}
	for _, s := range res.Skips {
		t.Logf("zeroed: %v", s)
	}
}

// FuzzDamagedDatabase damages the fixture database at random (cut short,
// bytes overwritten): the run never fails, never blocks, and every raw
// record it emits is one the intact database gives.
func FuzzDamagedDatabase(f *testing.F) {
	dir := f.TempDir()
	intact := filepath.Join(dir, "intact", "state.vscdb")
	writeDB(f, intact, true, globalRows())
	b, err := os.ReadFile(intact)
	if err != nil {
		f.Fatal(err)
	}
	whole := extracttest.Run(f, Adapter{}, extract.Options{Roots: []string{intact}})
	want := map[string]bool{}
	for _, r := range whole.Recs {
		if r.Kind == schema.KindRaw {
			want[r.Source.Key+"\x00"+string(r.Raw)] = true
		}
	}
	// cut: the length kept, in 1/65536 of the file; patch: (offset in
	// 1/65536 of the file, byte) pairs written over it.
	f.Add(uint16(65535), []byte{})
	f.Add(uint16(40000), []byte{})
	f.Add(uint16(65535), []byte{0x80, 0x00, 0xff, 0x90, 0x00, 0x0d})
	f.Add(uint16(30000), []byte{0x00, 0x10, 0x00, 0x00, 0x1c, 0xff})
	f.Fuzz(func(t *testing.T, cut uint16, patch []byte) {
		data := append([]byte(nil), b[:len(b)*int(cut)/65535]...)
		for i := 0; i+2 < len(patch) && len(data) > 0; i += 3 {
			off := (int(patch[i])<<8 | int(patch[i+1])) * len(data) / 65536
			data[off] = patch[i+2]
		}
		p := filepath.Join(t.TempDir(), "state.vscdb")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		res := extracttest.Run(t, Adapter{}, extract.Options{Roots: []string{p}})
		for _, r := range res.Recs {
			if r.Kind == schema.KindRaw && !want[r.Source.Key+"\x00"+string(r.Raw)] {
				// A byte overwritten inside a value changes the value: the
				// row still comes from the database, under its key.
				if !strings.HasPrefix(r.Source.Key, "ItemTable:") && !strings.HasPrefix(r.Source.Key, "cursorDiskKV:") {
					t.Errorf("raw record from nowhere: %s", r.Source.Key)
				}
			}
			for _, s := range secrets {
				if strings.Contains(string(schema.AppendRecord(nil, r)), s) {
					t.Errorf("%s read", s)
				}
			}
		}
	})
}
