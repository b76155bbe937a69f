// Package embedcfg holds the embedding provider flags that pos-embed,
// pos-query and pos-mcp share, with their environment variables, the
// query embedder of the two readers, and what pos-embed reads of a lake:
// the hash model its vectors were made with, its chunk texts for training,
// and the flags of pos-embed model train.
package embedcfg

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/pos-lake/pos/internal/oaiwire"
	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/urfave/cli/v2"
)

// Flag names.
const (
	ProviderFlag   = "provider"
	ModelFlag      = "model"
	DimensionsFlag = "dimensions"
	BaseURLFlag    = "base-url"
	APIKeyFlag     = "api-key"
	TimeoutFlag    = "embed-timeout"
	RetriesFlag    = "retries"
)

// Query defaults: a search waits for its query's vector, and falls back
// to lexical results when the endpoint does not answer, so a query gets a
// short timeout and a short, bounded retry.
const (
	QueryTimeout = 10 * time.Second
	QueryRetries = 2
	QueryBackoff = 100 * time.Millisecond
)

// EndpointFlags are the flags that reach an OpenAI-compatible endpoint,
// with pos-embed's timeout and retries.
func EndpointFlags() []cli.Flag { return endpointFlags(2*time.Minute, 5, false) }

// QueryEndpointFlags are EndpointFlags for the commands that embed a
// search query (pos-query, pos-mcp): the lake's recorded endpoint unless
// one is named, and a short timeout and retry.
func QueryEndpointFlags() []cli.Flag { return endpointFlags(QueryTimeout, QueryRetries, true) }

func endpointFlags(timeout time.Duration, retries int, query bool) []cli.Flag {
	base := "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama) (default: $OPENAI_BASE_URL, else " + oaiwire.OpenAIBaseURL + ")"
	wait := "timeout of one embedding request"
	if query {
		base = "OpenAI-compatible endpoint that embeds queries (default: the one the lake's chunks were embedded through, else $OPENAI_BASE_URL, else " +
			oaiwire.OpenAIBaseURL + ")"
		wait = "how long a query's embedding may take, all attempts together (then the search is lexical)"
	}
	return []cli.Flag{
		&cli.StringFlag{Name: BaseURLFlag, EnvVars: []string{"POS_EMBED_BASE_URL"}, Usage: base},
		&cli.StringFlag{Name: APIKeyFlag, EnvVars: []string{"POS_EMBED_API_KEY"},
			Usage: "API key sent as a bearer token (default: $OPENAI_API_KEY, sent to OpenAI's own API only; none when empty)"},
		&cli.DurationFlag{Name: TimeoutFlag, Value: timeout, Usage: wait},
		&cli.IntFlag{Name: RetriesFlag, Value: retries, Usage: "retries of a request on 429, 5xx and network errors, with exponential backoff"},
	}
}

// ProviderFlags are pos-embed's provider flags.
func ProviderFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: ProviderFlag, Value: "hash", EnvVars: []string{"POS_EMBED_PROVIDER"},
			Usage: "hash (local, deterministic, no model), openai (any OpenAI-compatible endpoint) or static (a model2vec model on this machine)"},
		&cli.StringFlag{Name: ModelFlag, EnvVars: []string{"POS_EMBED_MODEL"},
			Usage: "openai: the embedding model (default " + embed.DefaultOpenAIModel + "; e.g. nomic-embed-text on Ollama); static: a model directory, or a name pulled with pos-embed model pull"},
		&cli.IntFlag{Name: DimensionsFlag, EnvVars: []string{"POS_EMBED_DIMENSIONS"},
			Usage: "vector dimension: hash (default 384), or asked of an openai model that supports it (default: the model's)"},
	}, EndpointFlags()...)
}

// Endpoint is what the flags and the environment say about the endpoint,
// before a lake's record is known.
type Endpoint struct {
	BaseURL    string // named: --base-url or $POS_EMBED_BASE_URL
	EnvBaseURL string // $OPENAI_BASE_URL
	Key        string // named for the endpoint: --api-key or $POS_EMBED_API_KEY
	OpenAIKey  string // $OPENAI_API_KEY: for OpenAI's own API only
	Dimensions int
	Timeout    time.Duration
	Retries    int
	Backoff    time.Duration
}

// ReadEndpoint reads the endpoint flags that the command has, and the
// environment.
func ReadEndpoint(c *cli.Context) Endpoint {
	e := Endpoint{
		BaseURL: c.String(BaseURLFlag), EnvBaseURL: os.Getenv("OPENAI_BASE_URL"),
		Key: c.String(APIKeyFlag), OpenAIKey: os.Getenv("OPENAI_API_KEY"),
		Dimensions: c.Int(DimensionsFlag), Timeout: c.Duration(TimeoutFlag), Retries: c.Int(RetriesFlag),
	}
	if c.IsSet(RetriesFlag) && e.Retries == 0 {
		e.Retries = -1 // asked for none
	}
	return e
}

// Config resolves the endpoint for base, the base URL recorded with a
// lake's vectors ("" when none is): a named base URL wins over it, and
// $OPENAI_BASE_URL comes after it. The key is the one named for the
// endpoint, or $OPENAI_API_KEY when the endpoint is OpenAI's own API.
func (e Endpoint) Config(recorded string) embed.Config {
	base := e.BaseURL
	if base == "" {
		base = recorded
	}
	if base == "" {
		base = e.EnvBaseURL
	}
	return embed.Config{
		BaseURL: base, APIKey: oaiwire.Key(base, e.Key, e.OpenAIKey), Dimensions: e.Dimensions,
		Timeout: e.Timeout, Retries: e.Retries, Backoff: e.Backoff,
	}
}

// Config reads pos-embed's provider flags.
func Config(c *cli.Context) embed.Config {
	cfg := ReadEndpoint(c).Config("")
	cfg.Provider, cfg.Model = c.String(ProviderFlag), c.String(ModelFlag)
	cfg.ModelsDir = embed.ModelsDir()
	return cfg
}

// QueryEmbedder embeds queries with a lake's model: the hash provider
// locally; an OpenAI-compatible model at the endpoint the lake's chunks
// were embedded through (unless e names another), with the key named for
// it. A lake without vectors gets none (nil, nil).
func QueryEmbedder(ctx context.Context, lake string, e Endpoint) (query.Embedder, error) {
	m, ok, err := layout.LakeEmbedding(ctx, lake)
	if err != nil || !ok {
		return nil, err
	}
	if e.Backoff <= 0 {
		e.Backoff = QueryBackoff
	}
	if e.Timeout <= 0 {
		e.Timeout = QueryTimeout
	}
	cfg := e.Config(m.BaseURL)
	if m.Provider == "static" {
		cfg.Provider, cfg.ModelsDir = m.Provider, embed.ModelsDir()
	}
	p, err := embed.ProviderFor(m.Model, m.Dim, cfg)
	if err != nil && m.Provider == "static" {
		// The model is not on this machine: searches answer lexically
		// and say why.
		return func(context.Context, string) ([]float32, error) {
			return nil, fmt.Errorf("the query could not be embedded: %w", err)
		}, nil
	}
	if err != nil {
		return nil, err
	}
	at := cfg.BaseURL
	if at == "" {
		at = oaiwire.OpenAIBaseURL
	}
	return func(ctx context.Context, text string) ([]float32, error) {
		// The timeout bounds all the attempts together (a Retry-After
		// included): a search waits no longer for its vector.
		actx, cancel := context.WithTimeout(ctx, e.Timeout)
		defer cancel()
		vs, err := p.Embed(actx, []string{text})
		if err != nil && ctx.Err() == nil && actx.Err() != nil {
			err = fmt.Errorf("%s did not answer within %s", oaiwire.Redact(at), e.Timeout)
		}
		if err != nil {
			return nil, fmt.Errorf("the query could not be embedded with %s: %w", m.Model, err)
		}
		return vs[0], nil
	}, nil
}
