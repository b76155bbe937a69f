package query

import (
	"context"
	"fmt"
)

// ContextSessions resolves the sessions a context pack is made of: ids
// (each an id or a unique prefix; "" is the most recently active session),
// or, when pick.Query is set, the pick.K sessions a search for it ranks
// best: hybrid when pick.Embed is set, lexical otherwise. The search's
// warning and each session it picked are told on o. Every session is
// looked up within pick.Platform (a picked one: its own) and pick.Project.
func (d *DB) ContextSessions(ctx context.Context, o *Output, ids []string, pick SearchOptions) ([]SessionRef, error) {
	platforms := make([]string, len(ids))
	for i := range ids {
		platforms[i] = pick.Platform
	}
	if pick.Query != "" {
		opt := SearchOptions{Query: pick.Query, Mode: SearchLexical, K: pick.K, GroupBy: "session",
			Platform: pick.Platform, Project: pick.Project, Until: pick.Until}
		if pick.Embed != nil {
			opt.Mode, opt.Embed = SearchHybrid, pick.Embed
		}
		res, err := d.Search(ctx, opt)
		if err != nil {
			return nil, err
		}
		o.SearchWarning(res)
		if len(res.Sessions) == 0 {
			return nil, fmt.Errorf("no session matches %q", pick.Query)
		}
		ids, platforms = nil, nil
		for _, s := range res.Sessions {
			ids, platforms = append(ids, s.SessionID), append(platforms, s.Platform)
			o.Note("--query picked %s session %s (score %.3f): %s", s.Platform, s.SessionID, s.Score, s.Title)
		}
	}
	var refs []SessionRef
	for i, id := range ids {
		ref, err := d.ResolveSession(ctx, id, platforms[i], pick.Project)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}
