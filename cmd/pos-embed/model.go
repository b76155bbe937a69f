package main

import (
	"fmt"
	"os"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/urfave/cli/v2"
)

// modelCommand manages the static provider's models: pull one from the
// Hugging Face hub, list those on this machine.
func modelCommand() *cli.Command {
	return &cli.Command{
		Name:  "model",
		Usage: "pull, list and train model2vec models for --provider static",
		Description: `Models are kept in $POS_MODELS_DIR, else pos/models in the user's cache
directory (~/.cache/pos/models on Linux), one directory a model: ORG/NAME
with config.json, tokenizer.json and model.safetensors.`,
		Subcommands: []*cli.Command{
			{
				Name:      "pull",
				Usage:     "download a model2vec model from the Hugging Face hub",
				ArgsUsage: "ORG/NAME (e.g. minishlab/potion-retrieval-32M)",
				Description: `Downloads config.json, tokenizer.json and model.safetensors from
$HF_ENDPOINT (default ` + embed.DefaultHubEndpoint + `), with $HF_TOKEN as a bearer
token when set. Each file is checked against the size and SHA-256 the hub
states, and the model must load before it is put in place: a failed or cut
pull leaves no model, and pulling again resumes the download.`,
				Action: pullModel,
			},
			{
				Name:   "list",
				Usage:  "list the models on this machine",
				Action: listModels,
			},
			trainCommand(),
		},
	}
}

func pullModel(c *cli.Context) error {
	if c.NArg() != 1 {
		return cmdio.Usagef("model pull takes one model name (ORG/NAME)")
	}
	name := c.Args().First()
	if err := embed.ValidModelName(name); err != nil {
		return cmdio.UsageError{Err: err}
	}
	dir := embed.ModelsDir()
	if dir == "" {
		return fmt.Errorf("no models directory: set $POS_MODELS_DIR")
	}
	quiet := c.Bool("quiet")
	m, err := embed.Pull(c.Context, dir, name, embed.PullOptions{
		Endpoint: os.Getenv("HF_ENDPOINT"), Token: os.Getenv("HF_TOKEN"),
		Progress: func(file string, size int64) {
			if quiet {
				return
			}
			s := "size not stated"
			if size >= 0 {
				s = humanize.IBytes(uint64(size))
			}
			fmt.Fprintf(c.App.ErrWriter, "pos-embed: fetching %s (%s)\n", file, s)
		},
	})
	if err != nil {
		return err
	}
	cmdio.Summary(c, "pulled %s: %d tokens × %d dimensions, %s in %s; use it with --provider static --model %s",
		m.Name, m.Rows, m.Dim, humanize.IBytes(uint64(m.Size)), m.Dir, m.Name)
	return nil
}

func listModels(c *cli.Context) error {
	dir := embed.ModelsDir()
	ms, err := embed.ListModels(dir)
	if err != nil {
		return err
	}
	if len(ms) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "pos-embed: no models in %s (pos-embed model pull ORG/NAME)\n", dir)
		return nil
	}
	return embed.WriteModels(c.App.Writer, ms)
}
