package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/oaitest"
	"github.com/pos-lake/pos/internal/testbin"

	"github.com/pos-lake/pos/extract"
	"github.com/pos-lake/pos/extract/claudecode"
	"github.com/pos-lake/pos/query/querytest"
	"github.com/pos-lake/pos/schema"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/pos-lake/pos/transform/enrich"
	"github.com/pos-lake/pos/transform/normalize"
)

// buildBinaries builds pos-query, pos-scrub, pos-embed and pos-load once for the
// tests that run the real binaries.
var buildBinaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(testDir, "bin-")
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../pos-scrub", "../pos-embed", "../pos-load")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the binaries: %v\n%s", err, out)
	}
	return dir, nil
})

func binaries(t *testing.T) string {
	t.Helper()
	dir, err := buildBinaries()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// recorder is a local HTTP server that counts the requests it gets and
// keeps their Authorization headers; serve answers them (nil: 404).
type recorder struct {
	*httptest.Server
	mu    sync.Mutex
	n     int
	auths []string
	hosts []string
}

func newRecorder(serve http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.n++
		r.auths = append(r.auths, req.Header.Get("Authorization"))
		r.hosts = append(r.hosts, req.Method+" "+req.Host)
		r.mu.Unlock()
		if serve == nil {
			http.Error(w, "not here", http.StatusForbidden)
			return
		}
		serve(w, req)
	}))
	return r
}

func (r *recorder) count() (int, []string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n, append([]string(nil), r.auths...), append([]string(nil), r.hosts...)
}

// embeddingsAPI answers /v1/embeddings as an OpenAI-compatible server
// does, with the hash provider's vectors (so that similar texts score
// alike and the vector side finds something).
func embeddingsAPI(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req oaitest.EmbeddingsRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	oaitest.WriteEmbeddings(w, req, embed.NewHash(0).Vector)
}

// normalizedFixture writes the fixture's normalized records to a file.
func normalizedFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var extracted bytes.Buffer
	enc := schema.NewEncoder(&extracted)
	opt := extract.Options{Roots: []string{querytest.Fixture()}, User: "dev", Machine: "box", Now: func() time.Time { return querytest.Now }}
	if err := (claudecode.Adapter{}).Extract(ctx, opt, enc.Encode); err != nil {
		t.Fatal(err)
	}
	enc.Flush()
	path := filepath.Join(t.TempDir(), "normalized.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := normalize.Normalize(ctx, &extracted, f, normalize.Options{Enrich: enrich.All}); err != nil {
		t.Fatal(err)
	}
	return path
}

// cleanEnv is the environment without the variables that choose an
// endpoint, a key or a proxy, plus extra.
func cleanEnv(t *testing.T, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "POS_") || strings.HasPrefix(k, "OPENAI_") || strings.Contains(strings.ToLower(k), "proxy") {
			continue
		}
		env = append(env, kv)
	}
	// Nothing reaches the user's own data directory.
	tmp := t.TempDir()
	return append(env, append([]string{"HOME=" + tmp, "XDG_DATA_HOME=" + filepath.Join(tmp, "data")}, extra...)...)
}

// A lake embedded through a local OpenAI-compatible server is searched
// through that server, with the key named for it, and never through
// another host: neither $OPENAI_BASE_URL's nor OpenAI's own (a proxy set
// for every other host sees no request). $OPENAI_API_KEY never reaches
// the local server. With the server stopped, failing or hanging, search
// answers lexically with a one-line warning, quickly.
func TestSearchThroughTheLakesEndpoint(t *testing.T) {
	bin := binaries(t)
	local := newRecorder(embeddingsAPI) // the lake's endpoint
	defer local.Close()
	elsewhere := newRecorder(embeddingsAPI) // what $OPENAI_BASE_URL names
	defer elsewhere.Close()
	proxy := newRecorder(nil) // every other host, OpenAI's API included
	defer proxy.Close()
	const openAIKey = "sk-openai-0123456789abcdefghij"
	base := []string{"HTTP_PROXY=" + proxy.URL, "HTTPS_PROXY=" + proxy.URL, "OPENAI_API_KEY=" + openAIKey}

	lake := filepath.Join(t.TempDir(), "lake")
	in := normalizedFixture(t)
	build := exec.Command("bash", "-o", "pipefail", "-c",
		`"$1/pos-scrub" -q --key endpoint-test-key-of-32-bytes-or-more < "$3" | "$1/pos-embed" -q --lake "$4" --provider openai --model tiny --base-url "$2" | "$1/pos-load" -q --require-scrubbed --lake "$4"`,
		"sh", bin, local.URL+"/v1", in, lake)
	build.Env = cleanEnv(t, base...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the lake: %v\n%s", err, out)
	}
	embedded, auths, _ := local.count()
	if embedded == 0 {
		t.Fatal("pos-embed sent nothing to the local server")
	}
	for _, a := range auths {
		if strings.Contains(a, openAIKey) {
			t.Fatalf("pos-embed sent $OPENAI_API_KEY to %s", local.URL)
		}
	}
	state, err := os.ReadFile(filepath.Join(lake, "_state", "embeddings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(state), `"base_url": "`+local.URL+`/v1"`) || !strings.Contains(string(state), `"provider": "openai"`) ||
		strings.Contains(string(state), "sk-") {
		t.Fatalf("the lake's embeddings record:\n%s", state)
	}

	search := func(env []string, args ...string) (code int, stdout, stderr string, took time.Duration) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "pos-query"), append([]string{"search", "retry with exponential backoff", "--lake", lake, "-f", "json"}, args...)...)
		cmd.Env = cleanEnv(t, append(base, env...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		took = time.Since(start)
		return testbin.ExitCode(t, err), out.String(), errb.String(), took
	}
	type hit struct {
		VectorRank  int `json:"vector_rank"`
		LexicalRank int `json:"lexical_rank"`
	}
	hitsOf := func(stdout string) []hit {
		t.Helper()
		var hits []hit
		if err := json.Unmarshal([]byte(stdout), &hits); err != nil || len(hits) == 0 {
			t.Fatalf("no hits (%v): %s", err, stdout)
		}
		return hits
	}
	noneElsewhere := func() {
		t.Helper()
		if n, _, hosts := elsewhere.count(); n > 0 {
			t.Errorf("%d requests went to $OPENAI_BASE_URL's server: %v", n, hosts)
		}
		if n, _, hosts := proxy.count(); n > 0 {
			t.Errorf("%d requests went through the proxy to another host: %v", n, hosts)
		}
	}

	for _, tc := range []struct {
		name string
		env  []string
		auth string
	}{
		{name: "with $OPENAI_BASE_URL elsewhere", env: []string{"OPENAI_BASE_URL=" + elsewhere.URL + "/v1"}},
		{name: "without $OPENAI_BASE_URL"},
		{name: "with a key named for the endpoint", env: []string{"POS_EMBED_API_KEY=sk-local"}, auth: "Bearer sk-local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _, _ := local.count()
			code, stdout, stderr, _ := search(tc.env)
			if code != 0 || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			after, auths, _ := local.count()
			if after != before+1 {
				t.Errorf("the lake's endpoint got %d requests, want 1", after-before)
			}
			if got := auths[len(auths)-1]; got != tc.auth {
				t.Errorf("Authorization %q, want %q", got, tc.auth)
			}
			vector := false
			for _, h := range hitsOf(stdout) {
				vector = vector || h.VectorRank > 0
			}
			if !vector {
				t.Errorf("no hit from the vector side: %s", stdout)
			}
			noneElsewhere()
		})
	}

	warning := regexp.MustCompile(`^pos-query: warning: lexical results only: the query could not be embedded with tiny: [^\n]+\n$`)
	fallback := func(t *testing.T, what string, args ...string) time.Duration {
		t.Helper()
		code, stdout, stderr, took := search([]string{"OPENAI_BASE_URL=" + elsewhere.URL + "/v1"}, args...)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if !warning.MatchString(stderr) || !strings.Contains(stderr, what) {
			t.Errorf("stderr %q: want one warning line naming %q", stderr, what)
		}
		for _, h := range hitsOf(stdout) {
			if h.VectorRank != 0 || h.LexicalRank == 0 {
				t.Errorf("not a lexical hit: %+v", h)
			}
		}
		if took > 15*time.Second { // a hang guard only; the figure is logged
			t.Errorf("the search took %v", took)
		}
		noneElsewhere()
		return took
	}
	t.Run("endpoint failing with 503", func(t *testing.T) {
		failing := newRecorder(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		})
		defer failing.Close()
		took := fallback(t, "HTTP 503", "--base-url", failing.URL+"/v1")
		n, _, _ := failing.count()
		if n != 3 {
			t.Errorf("%d requests to the failing endpoint, want 3 (one and two retries)", n)
		}
		t.Logf("503: lexical answer in %v", took.Round(time.Millisecond))
	})
	t.Run("endpoint hanging", func(t *testing.T) {
		stop := make(chan struct{})
		hanging := newRecorder(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-stop:
			}
		})
		defer hanging.Close()
		defer close(stop)
		took := fallback(t, "did not answer within 1s", "--base-url", hanging.URL+"/v1", "--embed-timeout", "1s")
		t.Logf("hanging endpoint, --embed-timeout 1s: lexical answer in %v", took.Round(time.Millisecond))
	})
	t.Run("endpoint stopped", func(t *testing.T) {
		local.Close()
		took := fallback(t, "connection refused")
		t.Logf("stopped endpoint: lexical answer in %v", took.Round(time.Millisecond))
		if took > 2*time.Second {
			t.Logf("note: above the 2 s target on this (shared) machine")
		}
	})
}
