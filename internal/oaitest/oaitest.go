// Package oaitest speaks the server side of the OpenAI embeddings API for
// tests: the request a client sends and the response it expects, so a
// test's fake server only decides what to answer.
package oaitest

import (
	"encoding/json"
	"net/http"
)

// EmbeddingsRequest is the body of POST /embeddings.
type EmbeddingsRequest struct {
	Input      []string `json:"input"`
	Model      string   `json:"model"`
	Dimensions int      `json:"dimensions"`
}

// WriteEmbeddings answers req with vector's vector of each input, in the
// order given, as an OpenAI-compatible server does.
func WriteEmbeddings(w http.ResponseWriter, req EmbeddingsRequest, vector func(string) []float32) {
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Model  string  `json:"model"`
		Data   []datum `json:"data"`
	}{Object: "list", Model: req.Model}
	for i, text := range req.Input {
		out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: vector(text)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}
