// Package llmcfg holds the flags of the LLM that summaries use (an
// OpenAI-compatible chat endpoint), with their environment variables, for
// pos-query and pos-mcp.
package llmcfg

import (
	"os"
	"time"

	"github.com/pos-lake/pos/internal/oaiwire"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

// Flag names.
const (
	BaseURLFlag     = "llm-base-url"
	ModelFlag       = "llm-model"
	KeyFlag         = "llm-key"
	TimeoutFlag     = "timeout"
	RetriesFlag     = "llm-retries"
	ConcurrencyFlag = "concurrency"
)

// Flags are the LLM's flags.
func Flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: BaseURLFlag, EnvVars: []string{"POS_LLM_BASE_URL", "OPENAI_BASE_URL"},
			Usage: "OpenAI-compatible chat endpoint, e.g. http://localhost:11434/v1 (Ollama) (default: " + query.DefaultLLMBaseURL + ")"},
		&cli.StringFlag{Name: ModelFlag, EnvVars: []string{"POS_LLM_MODEL"},
			Usage: "the chat model of the LLM strategies (e.g. llama3.1, gpt-4o-mini)"},
		&cli.StringFlag{Name: KeyFlag, EnvVars: []string{"POS_LLM_API_KEY"},
			Usage: "API key sent as a bearer token (default: $OPENAI_API_KEY, sent to OpenAI's own API only; none when empty)"},
		&cli.DurationFlag{Name: TimeoutFlag, Value: 2 * time.Minute, Usage: "how long one LLM request may take"},
		&cli.IntFlag{Name: RetriesFlag, Value: 3, Usage: "retries of an LLM request on 429, 5xx and network errors, with exponential backoff"},
		&cli.IntFlag{Name: ConcurrencyFlag, Value: 4, Usage: "LLM requests at once in the map step of map-reduce and hierarchical"},
	}
}

// Options reads the LLM's flags. $OPENAI_API_KEY is sent to OpenAI's own
// API only: another endpoint gets the key named for it, or none.
func Options(c *cli.Context) query.LLMOptions {
	base := c.String(BaseURLFlag)
	o := query.LLMOptions{
		BaseURL: base, Model: c.String(ModelFlag), APIKey: oaiwire.Key(base, c.String(KeyFlag), os.Getenv("OPENAI_API_KEY")),
		Timeout: c.Duration(TimeoutFlag), Retries: c.Int(RetriesFlag), Concurrency: c.Int(ConcurrencyFlag),
	}
	if o.Retries == 0 {
		o.Retries = -1 // asked for none
	}
	return o
}
