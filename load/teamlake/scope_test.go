package teamlake_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"

	"github.com/pos-lake/pos/internal/loadtest"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/load/teamlake"
	"github.com/pos-lake/pos/load/teamlake/teamlaketest"
	"github.com/pos-lake/pos/schema"
)

var scrubKey = []byte("pos-lake test key of 32 bytes or more")

// Fake secrets, built from pieces so that no file holds one whole.
var (
	token = "ghp_" + "Zq3ZpX0oR9sV1tW2uX3yZ4aB5cD6eF7gH8iJ"
	email = "jane.roe" + "@acme-corp.io"
)

func TestScopeMatchProject(t *testing.T) {
	for _, tc := range []struct {
		pattern, project string
		want             bool
	}{
		{"pos", "/home/me/src/pos", true},
		{"pos", "/home/me/src/pos/cmd", true},
		{"pos", "/home/me/src/pos-lake", false},
		{"pos", "pos", true},
		{"client-*", "/home/me/client-acme", true},
		{"client-*", "/home/me/clients", false},
		{"/home/me/clients", "/home/me/clients/acme/web", true},
		{"/home/me/clients/", "/home/me/clients", true},
		{"/home/me/clients/*", "/home/me/clients/acme/web", true},
		{"/home/me/clients/*", "/home/me/clients", false},
		{"/home/me/client", "/home/me/clients", false},
		{"pos", "", false},
	} {
		if got := teamlake.MatchProject(tc.pattern, tc.project); got != tc.want {
			t.Errorf("MatchProject(%q, %q) = %v, want %v", tc.pattern, tc.project, got, tc.want)
		}
	}
	list, err := teamlake.ReadProjectList(strings.NewReader("# private\nsecret-repo\n\n  /home/me/clients/*  \n"))
	if err != nil || !slices.Equal(list, []string{"secret-repo", "/home/me/clients/*"}) {
		t.Errorf("ReadProjectList: %q, %v", list, err)
	}
	if _, err := teamlake.ReadProjectList(strings.NewReader("a[\n")); err == nil {
		t.Error("ReadProjectList took a malformed glob")
	}
}

// projectMsgs are messages of one session in project dir; the last has no
// project of its own and goes with its session.
func projectMsgs(session, dir, text string, n int) []*schema.Record {
	day := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	var out []*schema.Record
	for i := range n {
		r := loadtest.Msg(session+"-"+string(rune('a'+i)), session, text, day.Add(time.Duration(i)*time.Hour))
		if i < n-1 {
			r.Project, r.Cwd = dir, dir
		}
		r.SetScrubMark(schema.ScrubSecrets)
		out = append(out, r)
	}
	return out
}

func openLake(t *testing.T, lake, catalogURI string, opt teamlake.Options) *teamlake.Lake {
	t.Helper()
	opt.Lake, opt.Catalog, opt.Machine = lake, catalogURI, "box"
	l, err := teamlake.Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// strs is every string of a shared table's current snapshot, its lists'
// and structs' included, one a line; "" when the table does not exist.
func strs(t *testing.T, l *teamlake.Lake, name string) string {
	t.Helper()
	var b strings.Builder
	var walk func(a arrow.Array)
	walk = func(a arrow.Array) {
		switch x := a.(type) {
		case *array.String:
			for i := range x.Len() {
				b.WriteString(x.Value(i) + "\n")
			}
		case *array.LargeString:
			for i := range x.Len() {
				b.WriteString(x.Value(i) + "\n")
			}
		case *array.Binary:
			for i := range x.Len() {
				b.WriteString(string(x.Value(i)) + "\n")
			}
		case *array.List:
			walk(x.ListValues())
		case *array.Struct:
			for i := range x.NumField() {
				walk(x.Field(i))
			}
		}
	}
	teamlaketest.EachBatch(t, l, name, func(rec arrow.RecordBatch) {
		for _, c := range rec.Columns() {
			walk(c)
		}
	})
	return b.String()
}

// A local lake with two projects publishes only the one in scope; a
// denied project never reaches the shared lake, not even its session's
// rows without a project.
func TestScopePublish(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lake := t.TempDir()
	loadtest.Load(t, lake, append(projectMsgs("s1", "/home/dev/open", "open work", 3),
		projectMsgs("s2", "/home/dev/private-x", "private plans of project X", 3)...)...)

	only := openLake(t, "s3://"+s.TableBucket+"/only", s.Catalog, teamlake.Options{OnlyProjects: []string{"open"}})
	reps, err := only.Publish(ctx, lake)
	if err != nil {
		t.Fatal(err)
	}
	if got := teamlaketest.TableIDs(t, only, layout.TableMessages); !slices.Equal(got, []string{"s1-a", "s1-b", "s1-c"}) {
		t.Errorf("--only-project open: shared messages %v, want s1's", got)
	}
	if reps[0].Table != layout.TableMessages || reps[0].OutOfScope != 3 || reps[0].Added != 3 {
		t.Errorf("report: %+v, want 3 rows added and 3 out of scope", reps[0])
	}

	deny := openLake(t, "s3://"+s.TableBucket+"/deny", s.Catalog, teamlake.Options{DenyProjects: []string{"private-*"}})
	if _, err := deny.Publish(ctx, lake); err != nil {
		t.Fatal(err)
	}
	for _, name := range teamlake.Tables {
		if all := strs(t, deny, name); strings.Contains(all, "private") {
			t.Errorf("shared %s holds the denied project's rows:\n%s", name, all)
		}
	}
	if got := teamlaketest.TableIDs(t, deny, layout.TableMessages); !slices.Equal(got, []string{"s1-a", "s1-b", "s1-c"}) {
		t.Errorf("--deny-project private-*: shared messages %v, want s1's", got)
	}
}

// A message with an e-mail address and a token, published with PII on,
// arrives redacted in every column of every table; with PII off, the
// e-mail address stays. Rows never scrubbed are refused without PII.
func TestPIIPublish(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lake := t.TempDir()
	day := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	r := loadtest.Msg("m1", "s1", "ask "+email+" for the token "+token, day)
	r.Title = "mail " + email
	r.Project, r.Cwd, r.User = "/home/alice/src/app", "/home/alice/src/app", "alice"
	r.Raw = []byte(`{"type":"user","text":"ask ` + email + ` for ` + token + `"}`)
	loadtest.Load(t, lake, r)

	off := openLake(t, "s3://"+s.TableBucket+"/off", s.Catalog, teamlake.Options{})
	_, err := off.Publish(ctx, lake)
	if err == nil || !strings.Contains(err.Error(), "never scrubbed") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("publishing rows never scrubbed without PII: %v, want one line refusing them", err)
	}

	pii := openLake(t, "s3://"+s.TableBucket+"/pii", s.Catalog, teamlake.Options{PII: true, ScrubKey: scrubKey, Raw: true})
	reps, err := pii.Publish(ctx, lake)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reports: %+v", reps)
	tables := append(slices.Clone(teamlake.Tables), layout.TableRaw)
	seen := 0
	for _, name := range tables {
		all := strs(t, pii, name)
		if all == "" {
			continue
		}
		seen++
		for _, secret := range []string{email, token, "alice"} {
			if strings.Contains(all, secret) {
				t.Errorf("shared %s holds %q:\n%s", name, secret, all)
			}
		}
		if !strings.Contains(all, "[REDACTED:") {
			t.Errorf("shared %s holds no redaction marker:\n%s", name, all)
		}
	}
	if seen < 2 {
		t.Errorf("the shared lake has %d tables, want messages and raw at least", seen)
	}

	// PII off, rows scrubbed of secrets only: the e-mail address stays.
	lake2 := t.TempDir()
	r2 := loadtest.Msg("m2", "s2", "ask "+email, day)
	r2.SetScrubMark(schema.ScrubSecrets)
	loadtest.Load(t, lake2, r2)
	if _, err := off.Publish(ctx, lake2, layout.TableMessages); err != nil {
		t.Fatal(err)
	}
	if all := strs(t, off, layout.TableMessages); !strings.Contains(all, email) {
		t.Errorf("PII off: the e-mail address is gone:\n%s", all)
	}
}

// The shared table's scrub record sums the rows of every publish by mark,
// and agrees with the rows the table holds.
func TestScrubRecordTwoPublishes(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lake := t.TempDir()
	loadtest.Load(t, lake, teamlaketest.Messages(1, 6)...)
	name := "s3://" + s.TableBucket + "/rec"
	if _, err := openLake(t, name, s.Catalog, teamlake.Options{}).Publish(ctx, lake, layout.TableMessages); err != nil {
		t.Fatal(err)
	}
	loadtest.Load(t, lake, teamlaketest.Messages(5, 9)...)
	pii := openLake(t, name, s.Catalog, teamlake.Options{PII: true, ScrubKey: scrubKey})
	reps, err := pii.Publish(ctx, lake, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Added != 3 || !maps.Equal(reps[0].Scrub, map[string]int64{schema.ScrubPII: 3}) {
		t.Errorf("second publish: %+v, want 3 rows added, marked pii", reps[0])
	}
	tbl, err := pii.Table(ctx, layout.TableMessages)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := teamlake.ScrubRecord(tbl.Properties())
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{schema.ScrubSecrets: 6, schema.ScrubPII: 3}; !maps.Equal(rec, want) {
		t.Errorf("scrub record %v, want %v", rec, want)
	}
	if n := len(teamlaketest.TableIDs(t, pii, layout.TableMessages)); n != 9 {
		t.Errorf("the table holds %d rows, want 9", n)
	}
	if _, err := teamlake.ScrubRecord(map[string]string{teamlake.ScrubProperty: "{"}); err == nil {
		t.Error("ScrubRecord read a malformed record")
	}
}

// The raw table is published only when asked for.
func TestRawPublish(t *testing.T) {
	s := shared(t)
	ctx := context.Background()
	lake := t.TempDir()
	r := teamlaketest.Messages(1, 1)[0]
	r.Raw = []byte(`{"native":"record one"}`)
	loadtest.Load(t, lake, r)
	name := "s3://" + s.TableBucket + "/raw"
	no := openLake(t, name, s.Catalog, teamlake.Options{})
	if _, err := no.Publish(ctx, lake); err != nil {
		t.Fatal(err)
	}
	if _, err := no.Table(ctx, layout.TableRaw); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Errorf("without Raw, the raw table: %v, want none", err)
	}
	if _, err := no.Publish(ctx, lake, layout.TableRaw); err == nil || !strings.Contains(err.Error(), "--raw") {
		t.Errorf("publishing raw without Raw: %v, want a refusal naming --raw", err)
	}
	yes := openLake(t, name, s.Catalog, teamlake.Options{Raw: true})
	reps, err := yes.Publish(ctx, lake)
	if err != nil {
		t.Fatal(err)
	}
	if last := reps[len(reps)-1]; last.Table != layout.TableRaw || last.Added != 1 {
		t.Errorf("with Raw: %+v, want the raw table's row added", reps)
	}
	if all := strs(t, yes, layout.TableRaw); !strings.Contains(all, "record one") {
		t.Errorf("shared raw: %q", all)
	}
}
