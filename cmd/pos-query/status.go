package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/pos-lake/pos/cmd/internal/cmdio"
	"github.com/pos-lake/pos/load"
	"github.com/pos-lake/pos/query"
	"github.com/urfave/cli/v2"
)

func statusCmd() *cli.Command {
	return command(&cli.Command{
		Name:      "status",
		Usage:     "whether the lake's rows were scrubbed of secrets, table by table",
		UsageText: "pos-query status [OPTIONS]",
		Description: `Lists, for each table of the lake, how many rows were loaded with each
pos-scrub mark: secrets (pos-scrub), pii (pos-scrub --pii), off (pos-scrub
--off: scrubbing turned off on purpose), none (loaded without pos-scrub:
secrets in clear), unknown (loaded by a pos that did not record it; the
count is not known), declared (such rows declared scrubbed with pos-load
--declare-scrubbed). Every pos-query command warns on stderr of a lake that
holds rows loaded without pos-scrub, or of unknown scrubbing, with the
remedy.

EXAMPLES:
   pos-query status
   pos-query status --format json`,
		Flags:  []cli.Flag{cmdio.LakeFlag(), formatFlag(), widthFlag()},
		Action: runStatus,
	})
}

// scrubRow is a row of pos-query status.
type scrubRow struct {
	Table string `json:"table"`
	Scrub string `json:"scrub"`
	Rows  *int64 `json:"rows"` // nil: not known
}

func runStatus(c *cli.Context) error {
	e, err := setup(c, false)
	if err != nil {
		return err
	}
	defer e.db.Close()
	st, err := e.db.ScrubStatus()
	if err != nil {
		return err
	}
	var rows []scrubRow
	for _, t := range slices.Sorted(maps.Keys(st.Tables)) {
		for _, m := range slices.Sorted(maps.Keys(st.Tables[t])) {
			r := scrubRow{Table: t, Scrub: m}
			if m != load.ScrubUnknown && m != load.ScrubDeclared {
				n := st.Tables[t][m]
				r.Rows = &n
			}
			rows = append(rows, r)
		}
	}
	if err := e.print(query.TableOf(rows), nil); err != nil {
		return err
	}
	if st.Scrubbed() {
		e.note("every row was scrubbed of secrets")
	}
	return nil
}

// warnScrub tells, on stderr, of a lake holding rows whose secrets may be
// in clear, and what to do.
func warnScrub(c *cli.Context, db *query.DB) {
	st, err := db.ScrubStatus()
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "%s: warning: %v\n", c.App.Name, err)
		return
	}
	if st.Warning != "" {
		fmt.Fprintf(c.App.ErrWriter, "%s: warning: %s\n%s: hint: %s\n", c.App.Name, st.Warning, c.App.Name, st.Hint)
	}
}
