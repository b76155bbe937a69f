// Package all links every platform adapter into a program (pos-extract);
// import it for its side effect. Each adapter registers itself with package
// extract; its platform's name, aliases and capabilities are registered in
// package extract/platforms, which programs that do not read native
// histories use without the adapters.
//
// The imports are in adapters.go, which go generate writes from the
// folders list in extract/platforms (go generate ./extract/platforms).
package all
