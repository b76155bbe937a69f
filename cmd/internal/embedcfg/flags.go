package embedcfg

import (
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/urfave/cli/v2"
)

// TrainFlags are the parameters of pos-embed model train, with
// embed.DefaultTrainOptions as their defaults.
func TrainFlags() []cli.Flag {
	d := embed.DefaultTrainOptions
	return []cli.Flag{
		&cli.IntFlag{Name: "dim", Value: d.Dim, Usage: "learned dimensions"},
		&cli.IntFlag{Name: "hash-dim", Value: d.HashDim, Usage: "dimensions of the hashed word features (0: none)"},
		&cli.Float64Flag{Name: "semantic-share", Value: d.SemanticShare, Usage: "the learned part's share of a word's vector, in (0, 1]"},
		&cli.IntFlag{Name: "window", Value: d.Window, Usage: "words on each side that count as a word's context"},
		&cli.IntFlag{Name: "min-count", Value: d.MinCount, Usage: "occurrences a term or word needs to be learned"},
		&cli.IntFlag{Name: "max-terms", Value: d.MaxTerms, Usage: "the most terms learned"},
		&cli.IntFlag{Name: "max-words", Value: d.MaxWords, Usage: "the most words in the vocabulary"},
		&cli.Float64Flag{Name: "power", Value: d.Power, Usage: "singular values are raised to it (0 to 1)"},
		&cli.Float64Flag{Name: "sif", Value: d.SIF, Usage: "a word's vector is scaled by sif/(sif+p), p the word's share of the lake's words (negative: no weighting)"},
		&cli.BoolFlag{Name: "no-center", Usage: "keep the learned vectors' common direction (their mean)"},
		&cli.IntFlag{Name: "remove-pcs", Value: d.RemovePCs, Usage: "leading principal components removed from the learned vectors after centring (negative: none)"},
	}
}

// TrainOptions are the options TrainFlags set; --hash-dim 0 means no
// hashed features.
func TrainOptions(c *cli.Context) embed.TrainOptions {
	hashDim := c.Int("hash-dim")
	if hashDim == 0 {
		hashDim = -1 // none
	}
	return embed.TrainOptions{
		Dim: c.Int("dim"), HashDim: hashDim, SemanticShare: c.Float64("semantic-share"), Window: c.Int("window"),
		MinCount: c.Int("min-count"), MaxTerms: c.Int("max-terms"), MaxWords: c.Int("max-words"), Power: c.Float64("power"),
		SIF: c.Float64("sif"), NoCenter: c.Bool("no-center"), RemovePCs: c.Int("remove-pcs"),
	}
}

// ChunkerFlags are pos-embed's flags that cut texts into chunks, with
// embed.DefaultChunker as their defaults.
func ChunkerFlags() []cli.Flag {
	d := embed.DefaultChunker
	return []cli.Flag{
		&cli.IntFlag{Name: "chunk-tokens", Value: d.MaxTokens, Usage: "the most tokens in a chunk (estimated)"},
		&cli.IntFlag{Name: "chunk-overlap", Value: d.Overlap, Usage: "tokens a chunk repeats from the one before"},
		&cli.IntFlag{Name: "max-chunks", Value: d.MaxChunks, Usage: "the most chunks of one text: its head, its tail and distinct parts between"},
	}
}

// Chunker is the chunker ChunkerFlags set, or a usage error that says
// which values are accepted.
func Chunker(c *cli.Context) (embed.Chunker, error) {
	ch := embed.Chunker{MaxTokens: c.Int("chunk-tokens"), Overlap: c.Int("chunk-overlap"), MaxChunks: c.Int("max-chunks")}
	if ch.MaxTokens < 16 || ch.Overlap < 0 || ch.Overlap > ch.MaxTokens/2 {
		return ch, cmdio.Usagef("--chunk-tokens must be at least 16 and --chunk-overlap between 0 and half of it")
	} else if ch.MaxChunks < 4 {
		return ch, cmdio.Usagef("--max-chunks must be at least 4")
	}
	return ch, nil
}
