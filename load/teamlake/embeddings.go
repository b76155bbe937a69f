package teamlake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/pos-lake/pos/load/layout"
)

// embeddingsProperty is the chunks table's property that holds the
// embedding models of its vectors, as a local lake's _state/embeddings.json
// lists them: pos-query embeds a query with the latest, through the
// provider and endpoint recorded there.
const embeddingsProperty = "pos.embeddings"

// tableModels are the models a chunks table's property lists.
func tableModels(tbl *table.Table) ([]layout.EmbeddingModel, error) {
	v, ok := tbl.Properties()[embeddingsProperty]
	if !ok {
		return nil, nil
	}
	var ms []layout.EmbeddingModel
	if err := json.Unmarshal([]byte(v), &ms); err != nil {
		return nil, fmt.Errorf("%s's property %s: %w", tbl.Identifier(), embeddingsProperty, err)
	}
	return ms, nil
}

// mergeModels adds the models of add that ms lacks (by model, dimension,
// provider and endpoint), keeping the earlier start of each, oldest first.
func mergeModels(ms, add []layout.EmbeddingModel) []layout.EmbeddingModel {
	out := slices.Clone(ms)
	for _, m := range add {
		i := slices.IndexFunc(out, m.SameEndpoint)
		switch {
		case i < 0:
			out = append(out, m)
		case m.Since.Before(out[i].Since):
			out[i].Since = m.Since
		}
	}
	slices.SortStableFunc(out, func(a, b layout.EmbeddingModel) int { return a.Since.Compare(b.Since) })
	return out
}

// publishEmbeddings records the local lake's embedding models on the shared
// chunks table, merged with those other machines recorded.
func (l *Lake) publishEmbeddings(ctx context.Context, local string) error {
	mine, err := layout.Embeddings(local)
	if err != nil || len(mine) == 0 {
		return err
	}
	for attempt := 1; ; attempt++ {
		tbl, err := l.table(ctx, layout.TableChunks)
		if err != nil {
			return err
		}
		have, err := tableModels(tbl)
		if err != nil {
			return err
		}
		merged := mergeModels(have, mine)
		if slices.EqualFunc(merged, have, sameModel) {
			return nil
		}
		b, err := json.Marshal(merged)
		if err != nil {
			return err
		}
		txn := tbl.NewTransaction()
		if err = txn.SetProperties(iceberg.Properties{embeddingsProperty: string(b)}); err == nil {
			_, err = txn.Commit(ctx)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, table.ErrCommitFailed) || attempt == maxAttempts {
			return fmt.Errorf("recording the embedding models: %w", err)
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// sameModel tells whether two records of a model are the same.
func sameModel(a, b layout.EmbeddingModel) bool { return a.SameEndpoint(b) && a.Since.Equal(b.Since) }

// backoff waits before the attempt after attempt.
func backoff(ctx context.Context, attempt int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(attempt*attempt) * 50 * time.Millisecond):
		return nil
	}
}
