// A comment that is not the package's doc: a blank line follows it.

package undocumented
