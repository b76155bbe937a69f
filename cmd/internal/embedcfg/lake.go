package embedcfg

import (
	"context"
	"fmt"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/query"
	"github.com/pos-lake/pos/transform/embed"
)

// FollowLakeHashModel keeps a lake on the hash model it was embedded with:
// when the hash provider runs with no model named and the lake's vectors
// are of an older hash model, that model is used, so a sync after an
// upgrade does not stop at pos-load's refusal to mix models. The note says
// so (or "" when nothing changed).
func FollowLakeHashModel(cfg *embed.Config, lake string) string {
	if cfg.Provider != "hash" || cfg.Model != "" || lake == "" {
		return ""
	}
	ms, err := layout.Embeddings(lake)
	if err != nil || len(ms) == 0 {
		return ""
	}
	last := ms[len(ms)-1]
	if !embed.IsHashModel(last.Model) || last.Model == embed.HashModel || (cfg.Dimensions != 0 && cfg.Dimensions != last.Dim) {
		return ""
	}
	cfg.Model, cfg.Dimensions = last.Model, last.Dim
	return fmt.Sprintf("the lake's vectors are %s (%d-d): embedding with it; %s needs a new lake (or --model %s with pos-load --allow-mixed-embeddings)",
		last.Model, last.Dim, embed.HashModel, embed.HashModel)
}

// AddLakeTexts adds the text of each chunk of the lake (its latest
// version) to tr, in chunk id order so that the same lake trains the same
// model.
func AddLakeTexts(ctx context.Context, lake string, tr *embed.Trainer) error {
	db, err := query.Open(ctx, lake, query.LazyViews())
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Stream(ctx, textAdder{tr}, "SELECT text FROM chunks WHERE text IS NOT NULL AND text <> '' ORDER BY id, chunk_index"); err != nil {
		return fmt.Errorf("%s: reading the chunks: %w", lake, err)
	}
	if tr.Texts() == 0 {
		return fmt.Errorf("%s: %w: the lake has no chunks (build it with pos-embed in the pipeline)", lake, embed.ErrNoTrainingText)
	}
	return nil
}

type textAdder struct{ tr *embed.Trainer }

func (a textAdder) Begin([]query.Column) error { return nil }

func (a textAdder) Row(vals []any) error {
	if s, ok := vals[0].(string); ok {
		a.tr.Add(s)
	}
	return nil
}
