package cmdio

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseTime parses a --since/--until value: a duration back from now
// ("90m", "36h", "7d", "2w"), a date ("2026-01-31", UTC midnight) or an
// RFC 3339 time. The empty string is the zero time.
func ParseTime(s string, now time.Time) (time.Time, error) {
	return ParseTimeIn(s, now, time.UTC)
}

// ParseTimeIn is ParseTime with a date, or a time without an offset, read
// in loc: "2026-01-31" is midnight there.
func ParseTimeIn(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if n := len(s); n > 1 {
		unit := s[n-1]
		if v, err := strconv.ParseFloat(s[:n-1], 64); err == nil && v >= 0 {
			var d time.Duration
			switch unit {
			case 'd':
				d = time.Duration(v * float64(24*time.Hour))
			case 'w':
				d = time.Duration(v * float64(7*24*time.Hour))
			}
			if d > 0 || (v == 0 && (unit == 'd' || unit == 'w')) {
				return now.Add(-d).UTC(), nil
			}
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time: use a duration (30m, 36h, 7d, 2w), a date (2026-01-31) or RFC 3339", s)
}
