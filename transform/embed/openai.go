package embed

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pos-lake/pos/internal/english"
	"github.com/pos-lake/pos/internal/oaiwire"
	openai "github.com/sashabaranov/go-openai"
)

// OpenAI embeds with any server that speaks the OpenAI embeddings API
// (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio …), chosen by base
// URL. It retries a request on 429 (honouring Retry-After), on 5xx and on
// network errors, with exponential backoff and jitter; a rejected key or an
// unknown model fails at once with an error that says so.
type OpenAI struct {
	client  *openai.Client
	model   string
	baseURL string
	dims    int // asked of the model; 0: its default
	expect  int // the dimension the vectors must have (0: any, then fixed by the first)
	dim     atomic.Int64
	batch   int
	retries int
	backoff time.Duration
	sleep   func(ctx context.Context, d time.Duration) error
}

// NewOpenAI returns an OpenAI-compatible provider.
func NewOpenAI(c Config) (*OpenAI, error) {
	model := c.Model
	if model == "" {
		model = DefaultOpenAIModel
	}
	if IsHashModel(model) {
		return nil, fmt.Errorf("%s is the hash provider's model, not an OpenAI-compatible one", model)
	}
	base := c.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	base = strings.TrimRight(base, "/")
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	p := &OpenAI{
		client: oaiwire.NewClient(base, c.APIKey, timeout), model: model, baseURL: base, dims: c.Dimensions, expect: c.Dimensions,
		batch: c.Batch, retries: oaiwire.Retries(c.Retries, 5), backoff: oaiwire.Backoff(c.Backoff), sleep: oaiwire.Sleep,
	}
	if p.batch <= 0 {
		p.batch = 64
	}
	return p, nil
}

// Name implements Provider.
func (p *OpenAI) Name() string { return "openai" }

// Model implements Provider.
func (p *OpenAI) Model() string { return p.model }

// Endpoint is the base URL the vectors come from, without credentials:
// what a lake records so that its queries go to the same server.
func (p *OpenAI) Endpoint() string { return oaiwire.Redact(p.baseURL) }

// Dim implements Provider: the asked dimension, or the one the model
// answered with, or 0 before the first answer.
func (p *OpenAI) Dim() int {
	if d := p.dim.Load(); d > 0 {
		return int(d)
	}
	return p.expect
}

// MaxBatch implements Provider.
func (p *OpenAI) MaxBatch() int { return p.batch }

// ErrProvider marks an error the endpoint answered that a retry will not
// fix: a rejected key, an unknown model, a malformed answer.
var ErrProvider = errors.New("embedding provider error")

// Embed implements Provider: one request per MaxBatch texts.
func (p *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for len(texts) > 0 {
		n := min(len(texts), p.batch)
		vs, err := p.request(ctx, texts[:n])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		texts = texts[n:]
	}
	return out, nil
}

// request sends one batch, retrying what a retry may fix.
func (p *OpenAI) request(ctx context.Context, texts []string) ([][]float32, error) {
	req := openai.EmbeddingRequest{Input: texts, Model: openai.EmbeddingModel(p.model), Dimensions: p.dims}
	for attempt := 0; ; attempt++ {
		hctx, hint := oaiwire.WithHint(ctx)
		res, err := p.client.CreateEmbeddings(hctx, req)
		if err == nil {
			return p.vectors(res, len(texts))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		status, msg := oaiwire.ErrorStatus(err)
		if !oaiwire.Retryable(status) || attempt >= p.retries {
			return nil, p.explain(status, msg, err, attempt)
		}
		if err := p.sleep(ctx, oaiwire.Wait(p.backoff, attempt, hint)); err != nil {
			return nil, err
		}
	}
}

func (p *OpenAI) vectors(res openai.EmbeddingResponse, n int) ([][]float32, error) {
	if len(res.Data) != n {
		return nil, fmt.Errorf("%w: %s answered %d embeddings for %d texts", ErrProvider, p.baseURL, len(res.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range res.Data {
		j := d.Index
		if j < 0 || j >= n || out[j] != nil {
			j = i // servers that leave index out
		}
		out[j] = d.Embedding
	}
	for _, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: %s answered an empty embedding", ErrProvider, p.baseURL)
		}
		if err := p.checkDim(len(v)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkDim fixes the dimension at the first answer and holds every later
// vector to it.
func (p *OpenAI) checkDim(d int) error {
	want := p.expect
	if want == 0 {
		p.dim.CompareAndSwap(0, int64(d))
		want = int(p.dim.Load())
	}
	if d != want {
		hint := ""
		if p.dims > 0 {
			hint = " (the server ignores the dimensions asked for: leave --dimensions out)"
		} else if p.expect > 0 {
			hint = fmt.Sprintf(" (the lake's vectors have %d: pass --dimensions %d, or embed the lake again)", p.expect, p.expect)
		}
		return fmt.Errorf("%w: model %s answered %d-dimensional vectors, not %d%s", ErrProvider, p.model, d, want, hint)
	}
	p.dim.CompareAndSwap(0, int64(d))
	return nil
}

// explain turns a failed request into an error that says what to do.
func (p *OpenAI) explain(status int, msg string, err error, attempt int) error {
	at := p.baseURL
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w: %s rejected the API key (HTTP %d: %s); set --api-key or $POS_EMBED_API_KEY ($OPENAI_API_KEY)",
			ErrProvider, at, status, msg)
	case status == http.StatusNotFound || (status == http.StatusBadRequest && strings.Contains(strings.ToLower(msg), "model")):
		return fmt.Errorf("%w: model %q is not served at %s (HTTP %d: %s); check --model and --base-url",
			ErrProvider, p.model, at, status, msg)
	case status >= 400 && status < 500 && status != http.StatusTooManyRequests:
		return fmt.Errorf("%w: %s refused the request for model %q (HTTP %d: %s)", ErrProvider, at, p.model, status, msg)
	}
	what := fmt.Sprintf("HTTP %d: %s", status, msg)
	if status == 0 {
		what = err.Error()
	}
	return fmt.Errorf("embedding at %s failed after %s: %s", at, english.Plural(attempt+1, "attempt"), what)
}
