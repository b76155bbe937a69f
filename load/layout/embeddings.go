package layout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pos-lake/pos/internal/atomicfile"
)

// Embedding models: a lake holds the vectors of one model and dimension,
// recorded in <lake>/_state/embeddings.json when its first chunks are
// loaded; pos-load refuses chunks of another unless told to mix them, and
// pos-query embeds queries with it.
const embeddingsFile = "embeddings.json"

// EmbeddingModel is a model whose vectors a lake holds.
type EmbeddingModel struct {
	Model string `json:"model"`
	Dim   int    `json:"dim"`
	// Provider and BaseURL are how the latest chunks of the model were
	// embedded (the endpoint without credentials; no key is stored):
	// queries are embedded through the same endpoint.
	Provider string    `json:"provider,omitempty"`
	BaseURL  string    `json:"base_url,omitempty"`
	Since    time.Time `json:"since"` // when its first chunks were loaded
}

// Embeddings returns the embedding models of a lake, the latest last; none
// for a lake without chunks.
func Embeddings(lake string) ([]EmbeddingModel, error) {
	b, err := os.ReadFile(filepath.Join(lake, "_state", embeddingsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st struct {
		Models []EmbeddingModel `json:"models"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", embeddingsFile, err)
	}
	return st.Models, nil
}

func WriteEmbeddings(lake string, ms []EmbeddingModel) error {
	b, _ := json.MarshalIndent(map[string]any{"models": ms}, "", " ")
	return atomicfile.Write(filepath.Join(lake, "_state", embeddingsFile), b)
}

// SameEndpoint reports whether two chunks' models were embedded alike:
// one model and dimension, through one provider and endpoint.
func (m EmbeddingModel) SameEndpoint(o EmbeddingModel) bool {
	return m.Model == o.Model && m.Dim == o.Dim && m.Provider == o.Provider && m.BaseURL == o.BaseURL
}

// LakeEmbedding returns the model and dimension a lake's searches use: the
// latest model loaded, with the provider and endpoint it was embedded
// through when the lake recorded them. ok is false for a lake without
// vectors.
func LakeEmbedding(ctx context.Context, lake string) (EmbeddingModel, bool, error) {
	ms, err := Embeddings(lake)
	if err != nil || len(ms) == 0 {
		return EmbeddingModel{}, false, err
	}
	return ms[len(ms)-1], true, nil
}
