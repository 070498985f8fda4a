package camundatest

import "strings"

// UniqueName turns a test name plus suffix into a string usable as a BPMN process id and topic
// name (letters, digits, '_', '-', '.'), starting with a letter.
func UniqueName(parts ...string) string {
	s := strings.Join(parts, "_")
	var b strings.Builder
	b.WriteString("p_")
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
