package embed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Provider turns texts into vectors.
type Provider interface {
	// Name is the provider's name: hash or openai.
	Name() string
	// Model is the model name stamped on the chunks it embeds.
	Model() string
	// Dim is the vectors' dimension; 0 until known (an OpenAI-compatible
	// model asked for its default dimension says so in its first answer).
	Dim() int
	// MaxBatch bounds the texts of one Embed call.
	MaxBatch() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// embedEach is Embed for a provider that computes each text's vector in
// process: it stops between texts, every 64, once ctx is done.
func embedEach(ctx context.Context, texts []string, vector func(string) []float32) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = vector(t)
	}
	return out, nil
}

// Providers names the providers NewProvider knows.
var Providers = []string{"hash", "openai", "static"}

// Config chooses and configures a provider.
type Config struct {
	Provider   string // hash (default), openai or static
	Model      string // openai: the model (default text-embedding-3-small); hash: empty (HashModel) or one of HashModels
	Dimensions int    // hash: the dimension (default 384); openai: asked of the model (0: its default)
	BaseURL    string // openai: the endpoint, e.g. http://localhost:11434/v1 (default https://api.openai.com/v1)
	APIKey     string // openai: sent as a bearer token when set
	Batch      int    // openai: texts per request (default 64)
	Timeout    time.Duration
	Retries    int           // openai: attempts after the first on 429, 5xx and network errors (default 5)
	Backoff    time.Duration // openai: the first retry's wait, doubled each time (default 1s)
	ModelsDir  string        // static: where pulled models are (Model names one by org/name)
}

// DefaultOpenAIModel is the model the openai provider asks for unless told.
const DefaultOpenAIModel = "text-embedding-3-small"

// NewProvider returns the provider a Config names.
func NewProvider(c Config) (Provider, error) {
	switch strings.ToLower(c.Provider) {
	case "", "hash":
		return NewHashModel(c.Model, c.Dimensions)
	case "openai":
		return NewOpenAI(c)
	case "static":
		m, err := OpenStatic(c.Model, c.ModelsDir)
		if err == nil && c.Dimensions != 0 && c.Dimensions != m.Dim() {
			err = fmt.Errorf("static model %s has %d dimensions, not %d: leave --dimensions out", m.Model(), m.Dim(), c.Dimensions)
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("unknown provider %q (use %s)", c.Provider, strings.Join(Providers, ", "))
}

// ProviderFor returns the provider that embeds queries for a lake whose
// vectors were made by model with dim dimensions: the hash provider for
// the hash model, else an OpenAI-compatible one configured by c (its model
// and dimension are the lake's); c.Provider static asks for the static
// model the lake names, from c.ModelsDir.
func ProviderFor(model string, dim int, c Config) (Provider, error) {
	if IsHashModel(model) {
		return NewHashModel(model, dim)
	}
	if c.Provider == "static" {
		m, err := OpenStatic(model, c.ModelsDir)
		if err == nil && m.Dim() != dim {
			err = fmt.Errorf("static model %s has %d dimensions, the lake's vectors %d: it changed since the lake was embedded", model, m.Dim(), dim)
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	c.Provider, c.Model = "openai", model
	p, err := NewOpenAI(c)
	if err != nil {
		return nil, err
	}
	p.expect = dim
	return p, nil
}

// ModelsDir is where pos-embed model pull keeps models: $POS_MODELS_DIR,
// else pos/models in the user's cache directory ($XDG_CACHE_HOME or
// ~/.cache on Linux).
func ModelsDir() string {
	if d := os.Getenv("POS_MODELS_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "pos", "models")
}
