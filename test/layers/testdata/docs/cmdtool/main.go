// Command cmdtool says what it does.
package main
