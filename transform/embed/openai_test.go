package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pos-lake/pos/internal/oaitest"
	"github.com/pos-lake/pos/internal/vectest"
)

// fakeOpenAI speaks the OpenAI embeddings wire format on a local server:
// POST {base}/embeddings with {"input": [...], "model": ..., "dimensions": n}.
type fakeOpenAI struct {
	t        *testing.T
	key      string
	model    string
	dim      int
	fail429  atomic.Int64 // answer this many requests with 429 first
	fail500  atomic.Int64
	requests atomic.Int64
	mu       sync.Mutex
	batches  []int
	sawDims  []int
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	writeErr := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"code":null}}`, msg, typ)
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
		writeErr(404, "invalid_request_error", "no route "+r.URL.Path)
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		writeErr(401, "invalid_request_error", "Incorrect API key provided")
		return
	}
	if f.fail429.Add(-1) >= 0 {
		w.Header().Set("Retry-After", "0")
		writeErr(429, "rate_limit_exceeded", "Rate limit reached")
		return
	}
	if f.fail500.Add(-1) >= 0 {
		writeErr(500, "server_error", "The server had an error")
		return
	}
	var req oaitest.EmbeddingsRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeErr(400, "invalid_request_error", err.Error())
		return
	}
	if req.Model != f.model {
		writeErr(404, "invalid_request_error", fmt.Sprintf("The model `%s` does not exist", req.Model))
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, len(req.Input))
	f.sawDims = append(f.sawDims, req.Dimensions)
	f.mu.Unlock()
	dim := f.dim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	oaitest.WriteEmbeddings(w, req, NewHash(dim).Vector)
}

func newFake(t *testing.T) (*fakeOpenAI, string) {
	f := &fakeOpenAI{t: t, key: "sk-test", model: "nomic-embed-text", dim: 48}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d about parquet files", i)
	}
	return out
}

func TestOpenAIBatching(t *testing.T) {
	f, url := newFake(t)
	p, err := NewOpenAI(Config{BaseURL: url, APIKey: "sk-test", Model: "nomic-embed-text", Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if p.Dim() != 0 {
		t.Fatalf("dim before the first answer: %d", p.Dim())
	}
	in := texts(10)
	vs, err := p.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 10 || p.Dim() != 48 {
		t.Fatalf("%d vectors, dim %d", len(vs), p.Dim())
	}
	for i, v := range vs {
		if vectest.Dot(v, NewHash(48).Vector(in[i])) < 0.9999 {
			t.Fatalf("vector %d is not its text's", i)
		}
	}
	if fmt.Sprint(f.batches) != "[4 4 2]" {
		t.Errorf("batches %v", f.batches)
	}
}

func TestOpenAIDimensions(t *testing.T) {
	f, url := newFake(t)
	p, _ := NewOpenAI(Config{BaseURL: url, APIKey: "sk-test", Model: "nomic-embed-text", Dimensions: 16})
	vs, err := p.Embed(context.Background(), texts(1))
	if err != nil || len(vs[0]) != 16 || p.Dim() != 16 {
		t.Fatalf("%v %d", err, p.Dim())
	}
	if f.sawDims[0] != 16 {
		t.Errorf("dimensions not sent: %v", f.sawDims)
	}
	// A server that ignores dimensions is caught.
	f.dim = 48
	q, _ := ProviderFor("nomic-embed-text", 32, Config{BaseURL: url, APIKey: "sk-test"})
	_, err = q.Embed(context.Background(), texts(1))
	if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "48-dimensional vectors, not 32") {
		t.Errorf("dimension mismatch: %v", err)
	}
}

func TestOpenAIRetries(t *testing.T) {
	f, url := newFake(t)
	p, _ := NewOpenAI(Config{BaseURL: url, APIKey: "sk-test", Model: "nomic-embed-text", Backoff: time.Millisecond})
	var slept []time.Duration
	p.sleep = func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	f.fail429.Store(2)
	f.fail500.Store(1)
	vs, err := p.Embed(context.Background(), texts(3))
	if err != nil || len(vs) != 3 {
		t.Fatalf("%v", err)
	}
	if n := f.requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4 (two 429s, one 500, then success)", n)
	}
	if len(slept) != 3 {
		t.Errorf("slept %v", slept)
	}
	// Giving up after the retries says how often it tried.
	f.fail429.Store(100)
	p.retries = 2
	_, err = p.Embed(context.Background(), texts(1))
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "HTTP 429") {
		t.Errorf("exhausted retries: %v", err)
	}
}

func TestOpenAIBadKeyAndModel(t *testing.T) {
	f, url := newFake(t)
	p, _ := NewOpenAI(Config{BaseURL: url, APIKey: "sk-wrong", Model: "nomic-embed-text"})
	_, err := p.Embed(context.Background(), texts(1))
	if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), "rejected the API key (HTTP 401") {
		t.Errorf("bad key: %v", err)
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("a rejected key is not retried: %d requests", n)
	}
	p, _ = NewOpenAI(Config{BaseURL: url, APIKey: "sk-test", Model: "no-such-model"})
	_, err = p.Embed(context.Background(), texts(1))
	if !errors.Is(err, ErrProvider) || !strings.Contains(err.Error(), `model "no-such-model" is not served`) {
		t.Errorf("bad model: %v", err)
	}
	// No server at all: a network error, retried, then reported.
	p, _ = NewOpenAI(Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Retries: -1})
	if _, err = p.Embed(context.Background(), texts(1)); err == nil || errors.Is(err, ErrProvider) {
		t.Errorf("unreachable: %v", err)
	}
}

func TestOpenAICancel(t *testing.T) {
	f, url := newFake(t)
	f.fail429.Store(100)
	p, _ := NewOpenAI(Config{BaseURL: url, APIKey: "sk-test", Model: "nomic-embed-text", Backoff: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.Embed(ctx, texts(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestNewProvider(t *testing.T) {
	if p, err := NewProvider(Config{}); err != nil || p.Name() != "hash" {
		t.Fatal(p, err)
	}
	if _, err := NewProvider(Config{Provider: "hash", Model: "other"}); err == nil {
		t.Error("hash with another model")
	}
	if _, err := NewProvider(Config{Provider: "nope"}); err == nil {
		t.Error("unknown provider")
	}
	if p, err := NewProvider(Config{Provider: "openai"}); err != nil || p.Model() != DefaultOpenAIModel {
		t.Error(p, err)
	}
	if p, _ := ProviderFor(HashModel, 128, Config{}); p.Name() != "hash" || p.Dim() != 128 {
		t.Error(p)
	}
}
