package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/cmd/internal/embedcfg"
	"github.com/pos-lake/pos/transform/embed"
	"github.com/urfave/cli/v2"
)

// modelCommand manages the static provider's models: pull one from the
// Hugging Face hub, list those on this machine.
func modelCommand() *cli.Command {
	return &cli.Command{
		Name:        "model",
		Usage:       "pull, list and train model2vec models for --provider static",
		Description: cmdio.Help(helpFiles, "model"),
		Subcommands: []*cli.Command{
			{
				Name:        "pull",
				Usage:       "download a model2vec model from the Hugging Face hub",
				ArgsUsage:   "ORG/NAME (e.g. minishlab/potion-retrieval-32M)",
				Description: cmdio.Help(helpFiles, "pull", "{{hub}}", embed.DefaultHubEndpoint),
				Action:      pullModel,
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
	dir, err := modelsDir()
	if err != nil {
		return err
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

// trainCommand learns a static model from a lake's chunk texts
// (embed.Trainer).
func trainCommand() *cli.Command {
	return &cli.Command{
		Name:        "train",
		Usage:       "learn word vectors from a lake's texts and write them as a model2vec model",
		ArgsUsage:   " ",
		Description: cmdio.Help(helpFiles, "train"),
		Flags: append([]cli.Flag{cmdio.LakeFlag(),
			&cli.StringFlag{Name: "name", Value: "learned/lake", Usage: "the model's name (ORG/NAME); the hash of its input is appended"},
		}, embedcfg.TrainFlags()...),
		Action: trainModel,
	}
}

func trainModel(c *cli.Context) error {
	if c.NArg() != 0 {
		return cmdio.Usagef("model train takes no arguments (--lake DIR)")
	}
	lake := cmdio.LocalLake(c.String("lake"))
	if lake == "" {
		return cmdio.Usagef("model train needs --lake DIR")
	}
	name := c.String("name")
	if err := embed.ValidModelName(name); err != nil {
		return cmdio.UsageError{Err: err}
	}
	dir, err := modelsDir()
	if err != nil {
		return err
	}
	tr, err := embed.NewTrainer(embedcfg.TrainOptions(c))
	if err != nil {
		return cmdio.UsageError{Err: err}
	}
	start := time.Now()
	if err := embedcfg.AddLakeTexts(c.Context, lake, tr); err != nil {
		return err
	}
	m, err := tr.Write(dir, name)
	if errors.Is(err, embed.ErrNoTrainingText) {
		return fmt.Errorf("%s: %w", lake, err)
	}
	if err != nil {
		return err
	}
	cmdio.Summary(c, "trained %s from %d chunks: %d terms learned, %d words and characters × %d dimensions, %s in %s (%.1fs); use it with --provider static --model %s",
		m.Name, m.Texts, m.Terms, m.Words, m.Dim, humanize.IBytes(uint64(embed.ModelSize(m.Dir))), m.Dir, time.Since(start).Seconds(), m.Name)
	return nil
}

// modelsDir is where models are kept; none is an error that says how to
// name one.
func modelsDir() (string, error) {
	if dir := embed.ModelsDir(); dir != "" {
		return dir, nil
	}
	return "", fmt.Errorf("no models directory: set $POS_MODELS_DIR")
}
