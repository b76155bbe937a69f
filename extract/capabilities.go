package extract

import "github.com/pos-lake/pos/extract/platform"

// Support says how far a platform's native storage supports a capability
// (see package platform, where each platform declares it).
type Support = platform.Support

const (
	Yes     = platform.Yes
	Partial = platform.Partial
	No      = platform.No
)

// Capabilities is what a platform's data can and cannot support.
type Capabilities = platform.Capabilities

// Matrix renders capabilities as a markdown table (platforms as rows) with
// each platform's limitations listed under it.
func Matrix(caps []Capabilities) string { return platform.Matrix(caps) }
