package load

import "sync"

// Writers keeps the closed Parquet writers of a load, per table, for the
// next load in the same process: a writer's column buffers are sized for
// a full page, and a resident pos-sync that loads a few rows each turn
// would otherwise allocate (and clear) them again for every part file.
// A writer is reset for each new file, as within a load. Safe for
// concurrent use by the lanes.
type Writers struct {
	mu   sync.Mutex
	idle map[string][]rowWriter
	max  int
}

// NewWriters keeps up to max closed writers per table.
func NewWriters(max int) *Writers {
	return &Writers{idle: map[string][]rowWriter{}, max: max}
}

// get returns a kept writer of table, or nil.
func (p *Writers) get(table string) rowWriter {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.idle[table]
	if len(ws) == 0 {
		return nil
	}
	w := ws[len(ws)-1]
	ws[len(ws)-1] = nil
	p.idle[table] = ws[:len(ws)-1]
	return w
}

// put keeps a closed writer of table, unless max are kept already.
func (p *Writers) put(table string, w rowWriter) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle[table]) < p.max {
		p.idle[table] = append(p.idle[table], w)
	}
}

// kept is the number of writers kept, for tests.
func (p *Writers) kept() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, ws := range p.idle {
		n += len(ws)
	}
	return n
}
