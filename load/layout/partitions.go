package layout

import (
	"slices"
	"strings"
)

// Partition is one platform=/date= directory of a table.
type Partition struct{ Platform, Date string }

// Partitions lists a table's partitions of a platform ("": every
// platform), newest date first.
func Partitions(lake, table, platform string) ([]Partition, error) {
	parts, err := TablePartitions(lake, table)
	if err != nil {
		return nil, err
	}
	var out []Partition
	for _, p := range parts {
		if platform == "" || p.Platform == platform {
			out = append(out, Partition{Platform: p.Platform, Date: p.Date})
		}
	}
	slices.SortStableFunc(out, func(a, b Partition) int { return strings.Compare(b.Date, a.Date) })
	return out, nil
}

// DatesOf returns the distinct dates of partitions listed newest first.
func DatesOf(parts []Partition) []string {
	var dates []string
	for _, p := range parts {
		if len(dates) == 0 || dates[len(dates)-1] != p.Date {
			dates = append(dates, p.Date)
		}
	}
	return dates
}
