package teamlake

import "context"

// CreateEmptyTable creates a table of the lake as publishing does, with no
// snapshot yet.
func (l *Lake) CreateEmptyTable(ctx context.Context, name string) error {
	_, err := l.table(ctx, name)
	return err
}
