package schema

// SizeHint is about the size of r's encoding, counted from its long
// fields (texts, tool inputs and outputs, the native record): enough to
// size one buffer for a huge record instead of growing one by doubling,
// which leaves copies of half, a quarter … of it behind.
func SizeHint(r *Record) int {
	n := 512 + len(r.Title) + len(r.Text) + len(r.Thinking) + len(r.Raw) + len(r.Meta)
	for _, t := range r.Tools {
		n += 64 + len(t.Name) + len(t.Input) + len(t.Output)
	}
	if e := r.Exchange; e != nil {
		n += len(e.Prompt) + len(e.Response)
	}
	if d := r.Decision; d != nil {
		n += len(d.Context)
	}
	if c := r.Chunk; c != nil {
		n += 12 * len(c.Embedding)
	}
	for _, f := range r.Extra {
		n += len(f.Key) + len(f.Value) + 4
	}
	return n + n/16 // escapes
}
