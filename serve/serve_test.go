package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pos-lake/pos/extract/platforms"
	"github.com/pos-lake/pos/internal/testlake"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/serve"
)

const sessA = "11111111-1111-4111-8111-111111111111"

var fixtureLake string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "serve-test-")
	if err != nil {
		panic(err)
	}
	fixtureLake = filepath.Join(dir, "lake")
	if err := testlake.Embedded(context.Background(), querytest.Fixture(), fixtureLake, true); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// start serves lake on a test server at 127.0.0.1 for the rest of the
// test.
func start(t *testing.T, lake string) (*httptest.Server, *query.DB) {
	t.Helper()
	db, err := query.Open(context.Background(), lake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(serve.Handler(db, serve.Options{Platforms: platforms.Names(),
		Now: func() time.Time { return querytest.Now }}))
	t.Cleanup(srv.Close)
	return srv, db
}

func get(t *testing.T, srv *httptest.Server, path string) (int, http.Header, string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestCheckAddr(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8377": true, "127.0.0.1:0": true,
		"0.0.0.0:8377": false, ":8377": false, "localhost:8377": false, "[::]:8377": false,
		"192.168.1.2:80": false, "127.0.0.1": false, "example.com:80": false,
	} {
		if err := serve.CheckAddr(addr); (err == nil) != ok {
			t.Errorf("CheckAddr(%q) = %v", addr, err)
		}
	}
}

func TestPages(t *testing.T) {
	srv, _ := start(t, fixtureLake)
	for _, c := range []struct {
		path string
		code int
		want []string
	}{
		{"/", 200, []string{`<tr class="session">`, "Add a retry to the fetcher", "Explain the build", `href="/session/claude_code/` + sessA + `"`}},
		{"/?project=beta", 200, []string{"Explain the build"}},
		{"/?platform=claude_code&since=2026-03-03&until=2026-03-03", 200, []string{"Explain the build"}},
		{"/?since=2026-01-01&until=2026-01-31", 200, []string{"No session matches"}},
		{"/?platform=vim", 400, []string{"unknown platform"}},
		{"/?since=yesterday", 400, []string{"since: a date"}},
		{"/session/claude_code/" + sessA, 200, []string{"Add a retry to the fetcher\nwith exponential backoff", `<details class="entry subagent" open>`, "← sessions"}},
		{"/session/claude_code/11111111", 404, nil}, // pages name sessions whole
		{"/session/claude_code/zz", 404, nil},
		{"/session/vim/" + sessA, 404, nil},
		{"/search", 200, []string{`<input id="q" name="q"`, "<script>"}},
		{"/search?q=backoff", 200, []string{"<mark>", `href="/session/claude_code/` + sessA + `"`}},
		{"/charts", 200, []string{`id="tokens-per-day"`, `id="cost-per-day"`, `id="per-project"`, `id="per-platform"`, `<rect class="bar"`, "claude-opus-4-6", "/home/dev/alpha"}},
		{"/charts?project=nothing-like-it", 200, []string{"No usage in the lake"}},
		{"/nope", 404, nil},
	} {
		code, h, body := get(t, srv, c.path)
		if code != c.code {
			t.Errorf("%s: %d, want %d: %.300s", c.path, code, c.code, body)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %q in %.2000s", c.path, w, body)
			}
		}
		if code == 200 && !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: CSP %q", c.path, h.Get("Content-Security-Policy"))
		}
		// Nothing is loaded from elsewhere: no source, no link out.
		for _, bad := range []string{" src=", `href="http`, `href="//`, "@import", "url("} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: the page holds %q", c.path, bad)
			}
		}
	}
}

func TestSearchJSON(t *testing.T) {
	srv, _ := start(t, fixtureLake)
	code, h, body := get(t, srv, "/api/search?q=backoff")
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s: %s", code, h.Get("Content-Type"), body)
	}
	var res struct {
		Query string `json:"query"`
		Hits  []struct {
			SessionID string `json:"session_id"`
			URL       string `json:"url"`
			Snippet   string `json:"snippet"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	if res.Query != "backoff" || len(res.Hits) == 0 || res.Hits[0].SessionID != sessA ||
		res.Hits[0].URL != "/session/claude_code/"+sessA || !strings.Contains(strings.ToLower(res.Hits[0].Snippet), "**backoff**") {
		t.Errorf("%+v", res)
	}
	if code, _, body := get(t, srv, "/api/search?q="+strings.Repeat("x", 600)); code != 400 || !strings.Contains(body, "too long") {
		t.Errorf("a long query: %d %s", code, body)
	}
}

// TestReadOnly: the server answers GET and HEAD only, and only requests
// addressed to the loopback address.
func TestReadOnly(t *testing.T) {
	srv, _ := start(t, fixtureLake)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		req, _ := http.NewRequest(m, srv.URL+"/", strings.NewReader("x"))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d", m, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Host = "attacker.example:80"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host: %d", resp.StatusCode)
	}
}

// TestServe listens on a free loopback port and stops when its context
// ends.
func TestServe(t *testing.T) {
	if _, err := serve.Listen("0.0.0.0:0"); err == nil {
		t.Fatal("Listen accepted 0.0.0.0")
	}
	l, err := serve.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	db, err := query.Open(context.Background(), fixtureLake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve.Serve(ctx, l, db, serve.Options{Platforms: platforms.Names()}) }()
	resp, err := http.Get("http://" + l.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

// TestTimezone: the list shows times in the server's zone, as pos-query's
// tables do with --timezone.
func TestTimezone(t *testing.T) {
	db, err := query.Open(context.Background(), fixtureLake, query.LazyViews())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	first := func(loc *time.Location) time.Time {
		t.Helper()
		srv := httptest.NewServer(serve.Handler(db, serve.Options{Platforms: platforms.Names(), Location: loc,
			Now: func() time.Time { return querytest.Now }}))
		defer srv.Close()
		_, _, body := get(t, srv, "/")
		_, rest, ok := strings.Cut(body, `<td class="when">`)
		if !ok || len(rest) < 16 {
			t.Fatalf("no time in the list: %.1000s", body)
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04", rest[:16], loc)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	auckland, err := time.LoadLocation("Pacific/Auckland")
	if err != nil {
		t.Skipf("skipped: no zone data: %v", err)
	}
	utc, nz := first(time.UTC), first(auckland)
	if !utc.Equal(nz) {
		t.Fatalf("the same time read as %v in UTC and %v in Auckland", utc, nz)
	}
	if utc.Format("15:04") == nz.In(auckland).Format("15:04") {
		t.Fatalf("the Auckland page shows UTC's clock time %s", utc.Format("15:04"))
	}
}
