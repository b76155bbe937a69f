package query_test

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

	"github.com/pos-lake/pos/query"
)

// fakeLLM speaks the OpenAI chat completions wire format. Its answer to a
// request says which prompt it got ("map 2/5", "reduce", "rolling 3/5",
// "abstract", "abstractive"); reply, when set, overrides the whole
// response.
type fakeLLM struct {
	mu       sync.Mutex
	requests []fakeRequest
	inflight atomic.Int64
	peak     atomic.Int64
	delay    func(kind string) time.Duration
	reply    func(n int, kind string, w http.ResponseWriter) bool // true: handled
}

type fakeRequest struct {
	Kind, User, System, Model, Auth string
}

func (f *fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no such route","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 2 {
		http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	user := req.Messages[1].Content
	kind := promptKind(user)
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{Kind: kind, User: user, System: req.Messages[0].Content, Model: req.Model, Auth: r.Header.Get("Authorization")})
	n := len(f.requests)
	f.mu.Unlock()
	cur := f.inflight.Add(1)
	defer f.inflight.Add(-1)
	for {
		p := f.peak.Load()
		if cur <= p || f.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	if f.delay != nil {
		select {
		case <-time.After(f.delay(kind)):
		case <-r.Context().Done():
			return
		}
	}
	if f.reply != nil && f.reply(n, kind, w) {
		return
	}
	writeAnswer(w, fmt.Sprintf("[%s] summary %d.", kind, n), "stop")
}

func writeAnswer(w http.ResponseWriter, text, finish string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
	})
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"error"}}`, msg)
}

func promptKind(user string) string {
	var i, n int
	switch {
	case strings.HasPrefix(user, "Summarize this coding-agent session"):
		return "abstractive"
	case strings.HasPrefix(user, "Below is part"):
		fmt.Sscanf(user, "Below is part %d of %d", &i, &n)
		return fmt.Sprintf("map %d/%d", i, n)
	case strings.HasPrefix(user, "Below are summaries"):
		return "reduce"
	case strings.HasPrefix(user, "Below is the summary"):
		j := strings.Index(user, "(part ")
		fmt.Sscanf(user[j:], "(part %d of %d", &i, &n)
		return fmt.Sprintf("rolling %d/%d", i, n)
	case strings.HasPrefix(user, "Write an abstract"):
		return "abstract"
	}
	return "unknown"
}

func (f *fakeLLM) kinds() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		out = append(out, r.Kind)
	}
	return out
}

func (f *fakeLLM) count(prefix string) int {
	n := 0
	for _, k := range f.kinds() {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

func newFakeLLM(t *testing.T) (*fakeLLM, query.LLMOptions) {
	f := &fakeLLM{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, query.LLMOptions{BaseURL: srv.URL + "/v1", Model: "fake-model", APIKey: "sk-test", Backoff: time.Millisecond, Timeout: 10 * time.Second}
}

// bigOptions cut the synthetic session into several chunks.
func bigOptions(llm query.LLMOptions, strategy string) query.SummarizeOptions {
	return query.SummarizeOptions{Strategy: strategy, LLM: llm, ChunkTokens: 1000, Words: 100, NoStore: true}
}

// summarizeBig summarizes with strategy the session of a synthetic lake
// of n exchanges, cut into several chunks; the test fails on an error.
func summarizeBig(t *testing.T, llm query.LLMOptions, n int, strategy string) *query.Summary {
	t.Helper()
	lake, _ := synthLake(t, n, 60)
	s, err := openLake(t, lake).Summarize(context.Background(), bigOptions(llm, strategy))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSummarizeAbstractive(t *testing.T) {
	f, llm := newFakeLLM(t)
	lake, _ := synthLake(t, 3, 24)
	db := openLake(t, lake)
	s, err := db.Summarize(context.Background(), query.SummarizeOptions{Strategy: "abstractive", LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	if s.Text != "[abstractive] summary 1." || s.Model != "fake-model" || s.Calls != 1 || s.InputTokens != 100 || s.OutputTokens != 10 || !s.Stored {
		t.Fatalf("summary: %+v", s)
	}
	r := f.requests[0]
	if r.Model != "fake-model" || r.Auth != "Bearer sk-test" || !strings.Contains(r.System, "coding agent") {
		t.Fatalf("request: model %q auth %q system %q", r.Model, r.Auth, r.System)
	}
	for _, want := range []string{"at most 300 words", "Session: Step 0", "Facts: 3 exchanges", "### Exchange 3", "User: Step 2:", "Agent: "} {
		if !strings.Contains(r.User, want) {
			t.Errorf("prompt lacks %q:\n%s", want, r.User)
		}
	}
	// The same state again: reused, no request.
	again, err := db.Summarize(context.Background(), query.SummarizeOptions{Strategy: "abstractive", LLM: llm})
	if err != nil || !again.Reused || len(f.requests) != 1 {
		t.Fatalf("reuse: %v, %d requests", err, len(f.requests))
	}
	// Another model is another summary.
	llm.Model = "other-model"
	other, err := db.Summarize(context.Background(), query.SummarizeOptions{Strategy: "abstractive", LLM: llm})
	if err != nil || other.Reused || len(f.requests) != 2 {
		t.Fatalf("other model: %v, reused %v, %d requests", err, other != nil && other.Reused, len(f.requests))
	}
}

func TestSummarizeAbstractiveTooLarge(t *testing.T) {
	f, llm := newFakeLLM(t)
	s := summarizeBig(t, llm, 20, "abstractive")
	if len(f.requests) != 1 || len(s.Notes) == 0 || !strings.Contains(s.Notes[0], "did not fit one request") {
		t.Fatalf("%d requests, notes %q", len(f.requests), s.Notes)
	}
	u := f.requests[0].User
	if !strings.Contains(u, "### Exchange 1 ") || !strings.Contains(u, "### Exchange 20 ") || !strings.Contains(u, "left out") {
		t.Fatalf("the first and the latest exchanges should be kept:\n%s", u)
	}
}

func TestSummarizeRolling(t *testing.T) {
	f, llm := newFakeLLM(t)
	s := summarizeBig(t, llm, 20, "rolling")
	kinds := f.kinds()
	n := len(kinds)
	if n < 3 || kinds[0] != fmt.Sprintf("map 1/%d", n) || kinds[n-1] != fmt.Sprintf("rolling %d/%d", n, n) {
		t.Fatalf("requests: %v", kinds)
	}
	// Each step folds the previous summary in, in order.
	for i := 1; i < n; i++ {
		prev := fmt.Sprintf("summary %d.", i)
		if !strings.Contains(f.requests[i].User, "Summary so far:\n["+kinds[i-1]+"] "+prev) {
			t.Fatalf("request %d lacks the summary so far:\n%s", i+1, f.requests[i].User)
		}
	}
	if s.Text != fmt.Sprintf("[rolling %d/%d] summary %d.", n, n, n) {
		t.Fatalf("text %q", s.Text)
	}
	// Every exchange went to the model exactly once.
	all := ""
	for _, r := range f.requests {
		all += r.User
	}
	for i := 1; i <= 20; i++ {
		if c := strings.Count(all, fmt.Sprintf("### Exchange %d ", i)); c != 1 {
			t.Fatalf("exchange %d sent %d times", i, c)
		}
	}
}

func TestSummarizeMapReduceConcurrent(t *testing.T) {
	f, llm := newFakeLLM(t)
	f.delay = func(kind string) time.Duration {
		if strings.HasPrefix(kind, "map") {
			return 100 * time.Millisecond
		}
		return 0
	}
	llm.Concurrency = 3
	s := summarizeBig(t, llm, 24, "map-reduce")
	maps := f.count("map")
	if maps < 4 || f.count("reduce") < 1 {
		t.Fatalf("requests: %v", f.kinds())
	}
	if p := f.peak.Load(); p < 2 || p > 3 {
		t.Fatalf("peak concurrency %d, want 2..3", p)
	}
	if !strings.HasPrefix(s.Text, "[reduce]") || s.Calls != int64(len(f.kinds())) {
		t.Fatalf("text %q, calls %d", s.Text, s.Calls)
	}
	// The reduce step saw every part, in order.
	last := f.requests[len(f.requests)-1].User
	if !strings.Contains(last, "## Part 1: Exchanges 1 to") || strings.Index(last, "## Part 1:") > strings.Index(last, "## Part 2:") {
		t.Fatalf("reduce prompt:\n%s", last)
	}
}

func TestSummarizeHierarchicalLevels(t *testing.T) {
	f, llm := newFakeLLM(t)
	lake, _ := synthLake(t, 20, 60)
	db := openLake(t, lake)
	opt := bigOptions(llm, "hierarchical")
	opt.NoStore = false
	s, err := db.Summarize(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Levels) < 3 {
		t.Fatalf("levels: %+v", s.Levels)
	}
	chunks, session, abstract := s.Levels[0], s.Levels[len(s.Levels)-2], s.Levels[len(s.Levels)-1]
	if chunks.Name != "chunks" || len(chunks.Parts) != f.count("map") || chunks.Parts[0].First != 1 || chunks.Parts[len(chunks.Parts)-1].Last != 20 {
		t.Fatalf("chunk level: %+v", chunks)
	}
	if session.Name != "session" || abstract.Name != "abstract" || !strings.HasPrefix(abstract.Parts[0].Text, "[abstract]") {
		t.Fatalf("levels: %+v", s.Levels)
	}
	if s.Text != session.Parts[0].Text || !strings.HasPrefix(s.Text, "[reduce]") {
		t.Fatalf("text %q", s.Text)
	}
	md := s.Markdown()
	for _, want := range []string{"## Level 1: chunk summaries", "## Level " + fmt.Sprint(abstract.Level) + ": abstract", "### Exchanges 1 to"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// Stored with every level and read back whole.
	n := len(f.kinds())
	again, err := db.Summarize(context.Background(), opt)
	if err != nil || !again.Reused || len(f.kinds()) != n {
		t.Fatalf("reuse: %v", err)
	}
	if len(again.Levels) != len(s.Levels) || again.Levels[0].Parts[1].Text != s.Levels[0].Parts[1].Text {
		t.Fatalf("levels read back: %+v", again.Levels)
	}
}

func TestSummarizeAuto(t *testing.T) {
	f, llm := newFakeLLM(t)
	small, _ := synthLake(t, 2, 24)
	s, err := openLake(t, small).Summarize(context.Background(), query.SummarizeOptions{Strategy: "auto", LLM: llm, NoStore: true})
	if err != nil || s.Strategy != query.StrategyAbstractive {
		t.Fatalf("small session: %v %+v", err, s)
	}
	big, _ := synthLake(t, 24, 60)
	s, err = openLake(t, big).Summarize(context.Background(), bigOptions(llm, "auto"))
	if err != nil || s.Strategy != query.StrategyMapReduce || !strings.Contains(s.Notes[0], "auto: map-reduce") {
		t.Fatalf("big session: %v %+v", err, s)
	}
	_ = f
}

func TestSummarizeLLMErrors(t *testing.T) {
	lake, _ := synthLake(t, 2, 24)
	db := openLake(t, lake)
	ctx := context.Background()
	run := func(t *testing.T, f *fakeLLM, llm query.LLMOptions) (*query.Summary, error, time.Duration) {
		t.Helper()
		start := time.Now()
		s, err := db.Summarize(ctx, query.SummarizeOptions{Strategy: "abstractive", LLM: llm, NoStore: true})
		return s, err, time.Since(start)
	}

	t.Run("429 then success", func(t *testing.T) {
		f, llm := newFakeLLM(t)
		f.reply = func(n int, _ string, w http.ResponseWriter) bool {
			if n <= 2 {
				w.Header().Set("Retry-After", "0")
				apiError(w, http.StatusTooManyRequests, "slow down")
				return true
			}
			return false
		}
		s, err, _ := run(t, f, llm)
		if err != nil || s.Calls != 3 || s.Text != "[abstractive] summary 3." {
			t.Fatalf("%v %+v", err, s)
		}
	})
	// The server answers every request the same way, and the summary fails
	// with an error that says why.
	for _, tc := range []struct {
		name     string
		retries  int
		reply    func(http.ResponseWriter)
		errLLM   bool     // the error is an ErrLLM
		want     []string // in the error
		requests int      // made before failing; 0: not checked
	}{
		{"500 every time", 2, func(w http.ResponseWriter) { apiError(w, http.StatusInternalServerError, "boom") },
			false, []string{"failed after 3 attempts", "HTTP 500: boom"}, 3},
		{"bad key", 0, func(w http.ResponseWriter) { apiError(w, http.StatusUnauthorized, "invalid api key") },
			true, []string{"rejected the API key"}, 1},
		{"unknown model", 0, func(w http.ResponseWriter) { apiError(w, http.StatusNotFound, "model 'fake-model' not found") },
			true, []string{`model "fake-model" is not served`}, 0},
		{"empty answer", 0, func(w http.ResponseWriter) { writeAnswer(w, "  ", "stop") },
			true, []string{"empty answer"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, llm := newFakeLLM(t)
			llm.Retries = tc.retries
			f.reply = func(_ int, _ string, w http.ResponseWriter) bool {
				tc.reply(w)
				return true
			}
			_, err, _ := run(t, f, llm)
			ok := err != nil && (!tc.errLLM || errors.Is(err, query.ErrLLM)) && (tc.requests == 0 || len(f.kinds()) == tc.requests)
			for _, w := range tc.want {
				ok = ok && strings.Contains(err.Error(), w)
			}
			if !ok {
				t.Fatalf("%v (%d requests)", err, len(f.kinds()))
			}
		})
	}
	t.Run("cut at the length limit", func(t *testing.T) {
		f, llm := newFakeLLM(t)
		f.reply = func(_ int, _ string, w http.ResponseWriter) bool {
			writeAnswer(w, "A summary that stops", "length")
			return true
		}
		s, err, _ := run(t, f, llm)
		if err != nil || len(s.Notes) == 0 || !strings.Contains(s.Notes[len(s.Notes)-1], "length limit") {
			t.Fatalf("%v %+v", err, s)
		}
	})
	t.Run("slow answer hits the timeout", func(t *testing.T) {
		f, llm := newFakeLLM(t)
		f.delay = func(string) time.Duration { return 5 * time.Second }
		llm.Timeout = 200 * time.Millisecond
		_, err, took := run(t, f, llm)
		if err == nil || !strings.Contains(err.Error(), "did not answer within 200ms") {
			t.Fatal(err)
		}
		if took > 3*time.Second || len(f.kinds()) != 1 {
			t.Fatalf("took %v, %d requests: a timed-out request is not retried", took, len(f.kinds()))
		}
	})
	t.Run("no server", func(t *testing.T) {
		llm := query.LLMOptions{BaseURL: "http://127.0.0.1:1/v1", Model: "m", Retries: 1, Backoff: time.Millisecond}
		_, err := db.Summarize(ctx, query.SummarizeOptions{Strategy: "abstractive", LLM: llm, NoStore: true})
		if err == nil || !strings.Contains(err.Error(), "failed after 2 attempts") {
			t.Fatal(err)
		}
	})
	t.Run("a failed part stops map-reduce", func(t *testing.T) {
		big, _ := synthLake(t, 24, 60)
		f, llm := newFakeLLM(t)
		f.reply = func(_ int, kind string, w http.ResponseWriter) bool {
			if kind == "map 2/"+strings.SplitN(kind, "/", 2)[1] && strings.HasPrefix(kind, "map 2/") {
				apiError(w, http.StatusBadRequest, "context length exceeded")
				return true
			}
			return false
		}
		_, err := openLake(t, big).Summarize(ctx, bigOptions(llm, "map-reduce"))
		if !errors.Is(err, query.ErrLLM) || !strings.Contains(err.Error(), "part 2 of") || f.count("reduce") != 0 {
			t.Fatalf("%v; requests %v", err, f.kinds())
		}
	})
}
