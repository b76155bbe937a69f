package excerpt

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pos-lake/pos/schema"
)

const m1 = "[REDACTED:github-pat:5f0c9a1e]"

func TestMarkerLen(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{m1, len(m1)},
		{m1 + " tail", len(m1)},
		{"[REDACTED:1password-secret-key:00ff00ff]", 40},
		{"[REDACTED:github-pat:5f0c9a1]", 0},  // 7 hex digits
		{"[REDACTED:github-pat:5F0C9A1E]", 0}, // upper case
		{"[REDACTED::5f0c9a1e]", 0},           // no rule
		{"[REDACTED:github pat:5f0c9a1e]", 0}, // a space
		{"[REDACTED:github-pat:5f0c9a1e", 0},  // no ]
		{"x" + m1, 0},
		{"[REDACTED:" + strings.Repeat("a", 65) + ":5f0c9a1e]", 0},
	} {
		if got := MarkerLen(c.s); got != c.want {
			t.Errorf("MarkerLen(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestBackForward(t *testing.T) {
	s := "key " + m1 + " end"
	a, b := 4, 4+len(m1)
	for i := 0; i <= len(s); i++ {
		back, fwd := Back(s, i), Forward(s, i)
		if i > a && i < b {
			if back != a || fwd != b {
				t.Errorf("%d inside the marker: Back %d Forward %d, want %d %d", i, back, fwd, a, b)
			}
			continue
		}
		if back != i || fwd != i {
			t.Errorf("%d outside the marker: Back %d Forward %d", i, back, fwd)
		}
	}
	// Two markers side by side, and one that is not quite a marker.
	s = m1 + m1 + "[REDACTED:x:zz]"
	if got := Back(s, len(m1)+3); got != len(m1) {
		t.Errorf("second marker: Back %d", got)
	}
	if got := Back(s, 2*len(m1)+5); got != 2*len(m1)+5 {
		t.Errorf("no marker: Back %d", got)
	}
	// Runes.
	s = "héllo"
	if got := Back(s, 2); got != 1 {
		t.Errorf("rune: Back %d", got)
	}
	if got := Forward(s, 2); got != 3 {
		t.Errorf("rune: Forward %d", got)
	}
}

func TestCuts(t *testing.T) {
	s := strings.Repeat("a", 100) + " " + m1 + " tail"
	for n := 0; n < len(s)+2; n++ {
		p := Prefix(s, n)
		if len(p) > n || !strings.HasPrefix(s, p) || !whole(s, len(p)) {
			t.Fatalf("Prefix(%d) = %q", n, p)
		}
		if q := Suffix(s, n); len(q) > n || !strings.HasSuffix(s, q) || !whole(s, len(s)-len(q)) {
			t.Fatalf("Suffix(%d) = %q", n, q)
		}
		if p := PrefixRunes(s, n); utf8.RuneCountInString(p) > n || !strings.HasPrefix(s, p) || !whole(s, len(p)) {
			t.Fatalf("PrefixRunes(%d) = %q", n, p)
		}
		if q := SuffixRunes(s, n); utf8.RuneCountInString(q) > n || !strings.HasSuffix(s, q) || !whole(s, len(s)-len(q)) {
			t.Fatalf("SuffixRunes(%d) = %q", n, q)
		}
	}
	if got := Prefix(s, 110); got != strings.Repeat("a", 100)+" " {
		t.Errorf("a cut inside the marker goes before it: %q", got)
	}
	if got := Line("  first "+m1+"\nsecond", 20); got != "first…" {
		t.Errorf("Line: %q", got)
	}
	if got := Line("first line\nsecond", 200); got != "first line" {
		t.Errorf("Line: %q", got)
	}
	if got := Width("ab "+m1, 10, "…"); got != "ab …" {
		t.Errorf("Width: %q", got)
	}
	if got := WidthStart(m1+"/src/x", 5); got != "/src/x" {
		t.Errorf("WidthStart: %q", got)
	}
}

// whole reports whether position i of s is outside every marker.
func whole(s string, i int) bool {
	for _, m := range Markers(s) {
		if i > m[0] && i < m[1] {
			return false
		}
	}
	return true
}

func TestSource(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAxyz0123456789abcdefghijklmnopqrstuvwxyzABCD\n", 25) + "-----END RSA PRIVATE KEY-----"
	text := "\n\n  deploy with " + key + "\nthen run it\n"
	src := Source(text)
	if !strings.HasPrefix(src, "deploy with -----BEGIN") || !strings.Contains(src, key) {
		t.Fatalf("Source does not carry the key block whole: %q", src)
	}
	// Lines after the first stop at SourceMax; the first is whole.
	long := strings.Repeat("x", 3*SourceMax) + "\nsecond"
	if got := Source(long); got != strings.Repeat("x", 3*SourceMax) {
		t.Fatalf("first line not whole: %d bytes", len(got))
	}
	many := "first\n" + strings.Repeat("0123456789\n", SourceMax)
	if got := Source(many); len(got) > SourceMax || !strings.HasPrefix(got, "first\n") || strings.HasSuffix(got, "\n") {
		t.Fatalf("lines after the first: %d bytes", len(got))
	}
	if got := ContextSource(long); got != "" {
		t.Fatalf("ContextSource of a long first line: %d bytes", len(got))
	}
	if got := ContextSource("a prompt\nwith two lines"); got != "a prompt\nwith two lines" {
		t.Fatalf("ContextSource: %q", got)
	}
}

func TestFinish(t *testing.T) {
	line := strings.Repeat("word ", 30) + m1 + " after"
	s := &schema.Record{Kind: schema.KindSession, Title: line + "\nsecond line", Session: &schema.Session{TitleSource: schema.TitlePrompt}, Line: []byte("x")}
	if !Finish(s) || s.Line != nil {
		t.Fatal("Finish did not change the session")
	}
	if len(s.Title) > PromptTitleMax || !strings.HasSuffix(s.Title, Ellipsis) || strings.Contains(s.Title, "[REDACTED") {
		t.Fatalf("session title %q", s.Title)
	}
	if Finish(s) {
		t.Fatal("Finish is not idempotent")
	}
	d := &schema.Record{Kind: schema.KindDecision, Text: strings.Repeat("a", 590) + " " + m1,
		Decision: &schema.Decision{Context: strings.Repeat("b", 190) + " " + m1 + "\nmore"}}
	Finish(d)
	if d.Text != strings.Repeat("a", 590)+Ellipsis || d.Decision.Context != strings.Repeat("b", 190)+Ellipsis {
		t.Fatalf("decision %q / %q", d.Text, d.Decision.Context)
	}
	r := &schema.Record{Kind: schema.KindDocument, ContentType: schema.ContentSubagentSummary, Agent: &schema.Agent{Type: "Explore"},
		Title: "Explore: " + strings.Repeat("c", 119) + "\nmore"}
	Finish(r)
	if r.Title != "Explore: "+strings.Repeat("c", 119) {
		t.Fatalf("report title %q", r.Title)
	}
}

// Fuzz the cuts with texts holding markers: a cut is a prefix (or suffix)
// of the text, within its size, on a rune boundary of valid text, and
// keeps every marker whole or leaves it out.
func FuzzCuts(f *testing.F) {
	f.Add("key "+m1+" end", 10)
	f.Add(m1+m1, 31)
	f.Add("héllo [REDACTED:aws-access-token:0123abcd]", 12)
	f.Add("[REDACTED:x:0123abcd", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = max(n%(len(s)+3), 0)
		valid := utf8.ValidString(s)
		check := func(name, cut string, at int) {
			if !whole(s, at) {
				t.Fatalf("%s(%q, %d) = %q splits a marker", name, s, n, cut)
			}
			if valid && !utf8.ValidString(cut) {
				t.Fatalf("%s(%q, %d) = %q splits a rune", name, s, n, cut)
			}
		}
		p := Prefix(s, n)
		if len(p) > n && len(s) > n || !strings.HasPrefix(s, p) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
		check("Prefix", p, len(p))
		q := Suffix(s, n)
		if len(q) > n && len(s) > n || !strings.HasSuffix(s, q) {
			t.Fatalf("Suffix(%q, %d) = %q", s, n, q)
		}
		check("Suffix", q, len(s)-len(q))
		p = PrefixRunes(s, n)
		if !strings.HasPrefix(s, p) {
			t.Fatalf("PrefixRunes(%q, %d) = %q", s, n, p)
		}
		check("PrefixRunes", p, len(p))
		q = SuffixRunes(s, n)
		if !strings.HasSuffix(s, q) {
			t.Fatalf("SuffixRunes(%q, %d) = %q", s, n, q)
		}
		check("SuffixRunes", q, len(s)-len(q))
		l := Line(s, n)
		first := strings.TrimSpace(s)
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = strings.TrimSpace(first[:i])
		}
		if Line(l, n) != l {
			t.Fatalf("Line(%q, %d) = %q is not its own Line", s, n, l)
		}
		if l != first {
			body := strings.TrimSuffix(l, Ellipsis)
			if len(l) > max(n, len(Ellipsis)) || body == l || !strings.HasPrefix(first, body) || !whole(first, len(body)) {
				t.Fatalf("Line(%q, %d) = %q", s, n, l)
			}
		}
		w := Width(s, n, "…")
		if !strings.HasPrefix(s, strings.TrimSuffix(w, "…")) {
			t.Fatalf("Width(%q, %d) = %q", s, n, w)
		}
		check("Width", w, len(strings.TrimSuffix(w, "…")))
	})
}

func TestSentence(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Let's use DuckDB. Then test it.", "Let's use DuckDB."},
		{"Let's use it! More", "Let's use it!"},
		{"We decided on v1.2 today\nnext line", "We decided on v1.2 today"},
		{"Use the key " + m1 + " for the deploy. Done.", "Use the key " + m1 + " for the deploy."},
		{"Use [REDACTED:a.b:0123abcd] now. Next", "Use [REDACTED:a.b:0123abcd] now."},
	} {
		if got := Sentence(c.in, 600); got != c.want {
			t.Errorf("Sentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := "We decided " + strings.Repeat("x", 580) + " " + m1 + " end."
	if got := Sentence(long, DecisionMax); len(got) > DecisionMax || strings.Contains(got, "[REDACTED") || Sentence(got, DecisionMax) != got {
		t.Errorf("long sentence: %q", got)
	}
}

func TestSourceOf(t *testing.T) {
	text := "Intro. Let's use this key " + "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY----- now.\nmore"
	start := strings.Index(text, "Let's")
	end := strings.Index(text, "-----BEGIN") + len("-----BEGIN RSA PRIVATE KEY-----")
	if got := SourceOf(text, start, end); got != text[start:] {
		t.Fatalf("SourceOf: %q", got)
	}
	big := "Let's go. " + strings.Repeat("y", 2*SourceMax)
	if got := SourceOf(big, 0, 9); len(got) != 9+SourceMax {
		t.Fatalf("SourceOf of a long line: %d bytes", len(got))
	}
	lines := "Let's go.\n" + strings.Repeat("line\n", SourceMax)
	if got := SourceOf(lines, 0, 9); len(got) > 9+SourceMax || strings.HasSuffix(got, "\n") || !strings.HasSuffix(got, "line") {
		t.Fatalf("SourceOf of many lines: %d bytes", len(got))
	}
}
