// Package documented says what it holds.
package documented
