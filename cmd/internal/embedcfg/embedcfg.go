// Package embedcfg holds the embedding provider flags that pos-embed and
// pos-query share, with their environment variables.
package embedcfg

import (
	"os"
	"time"

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

// EndpointFlags are the flags that reach an OpenAI-compatible endpoint.
func EndpointFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: BaseURLFlag, EnvVars: []string{"POS_EMBED_BASE_URL", "OPENAI_BASE_URL"},
			Usage: "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama) (default: https://api.openai.com/v1)"},
		&cli.StringFlag{Name: APIKeyFlag, EnvVars: []string{"POS_EMBED_API_KEY", "OPENAI_API_KEY"},
			Usage: "API key sent as a bearer token (none is sent when empty)"},
		&cli.DurationFlag{Name: TimeoutFlag, Value: 2 * time.Minute, Usage: "timeout of one embedding request"},
		&cli.IntFlag{Name: RetriesFlag, Value: 5, Usage: "retries of a request on 429, 5xx and network errors, with exponential backoff"},
	}
}

// ProviderFlags are pos-embed's provider flags.
func ProviderFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: ProviderFlag, Value: "hash", EnvVars: []string{"POS_EMBED_PROVIDER"},
			Usage: "hash (local, deterministic, no model) or openai (any OpenAI-compatible endpoint)"},
		&cli.StringFlag{Name: ModelFlag, EnvVars: []string{"POS_EMBED_MODEL"},
			Usage: "openai: the embedding model (default " + embed.DefaultOpenAIModel + "; e.g. nomic-embed-text on Ollama)"},
		&cli.IntFlag{Name: DimensionsFlag, EnvVars: []string{"POS_EMBED_DIMENSIONS"},
			Usage: "vector dimension: hash (default 384), or asked of an openai model that supports it (default: the model's)"},
	}, EndpointFlags()...)
}

// Config reads the provider flags that the command has.
func Config(c *cli.Context) embed.Config {
	cfg := embed.Config{
		Provider: c.String(ProviderFlag), Model: c.String(ModelFlag), Dimensions: c.Int(DimensionsFlag),
		BaseURL: c.String(BaseURLFlag), APIKey: c.String(APIKeyFlag),
		Timeout: c.Duration(TimeoutFlag), Retries: c.Int(RetriesFlag),
	}
	if c.IsSet(RetriesFlag) && cfg.Retries == 0 {
		cfg.Retries = -1 // asked for none
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv("POS_EMBED_API_KEY")
	}
	return cfg
}
