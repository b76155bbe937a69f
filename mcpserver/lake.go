package mcpserver

import (
	"context"
	"sync"

	"github.com/pos-lake/pos/load/layout"
	"github.com/pos-lake/pos/query"
)

// lakeDB opens the lake on demand and again when it has changed: a view
// defined when a table had no files (or files of one schema) must be
// defined again to see the files a later pos-load added.
type lakeDB struct {
	path string
	mu   sync.Mutex
	cur  *handle
}

type handle struct {
	db    *query.DB
	stamp string
	refs  int
	stale bool
}

// acquire returns the open lake; release must be called when the call is
// done with it.
func (l *lakeDB) acquire(ctx context.Context) (*query.DB, func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := layout.StateStamp(l.path)
	if l.cur == nil || l.cur.stamp != st {
		db, err := query.Open(ctx, l.path, query.LazyViews())
		if err != nil {
			return nil, nil, err
		}
		if old := l.cur; old != nil {
			old.stale = true
			if old.refs == 0 {
				old.db.Close()
			}
		}
		l.cur = &handle{db: db, stamp: st}
	}
	h := l.cur
	h.refs++
	release := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		h.refs--
		if h.stale && h.refs == 0 {
			h.db.Close()
		}
	}
	return h.db, release, nil
}

func (l *lakeDB) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil {
		l.cur.stale = true
		if l.cur.refs == 0 {
			l.cur.db.Close()
		}
		l.cur = nil
	}
}
