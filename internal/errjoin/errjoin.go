// Package errjoin joins the errors of a step and its cleanup (a flush, a
// close) into one, for the commands and the extract runner that report
// them. It differs from errors.Join in one way: a single error comes back
// as it is, not wrapped, so its message prints without a joining newline
// and errors.As still finds it where the exit code is chosen.
package errjoin

import "errors"

// Join returns nil when every error is nil, the one error when only one is
// not nil, and errors.Join of the others in their order otherwise, so the
// caller puts the most meaningful error first.
func Join(errs ...error) error {
	var keep []error
	for _, e := range errs {
		if e != nil {
			keep = append(keep, e)
		}
	}
	switch len(keep) {
	case 0:
		return nil
	case 1:
		return keep[0]
	}
	return errors.Join(keep...)
}
