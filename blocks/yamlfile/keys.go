package yamlfile

import (
	"reflect"
	"sort"
	"strings"
)

// unknown is the message for key name, unknown in the mapping at parent (a
// path, "" for the root): the closest of the known keys by its full path,
// or all of them when none is close.
func unknown(parent, name string, known map[string]reflect.StructField) string {
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	msg := "unknown key"
	if c := Closest(name, names); c != "" {
		msg += "; did you mean " + join(parent, c) + "?"
	} else if len(names) > 0 {
		msg += "; the keys here are " + strings.Join(names, ", ")
	}
	return msg
}

// join appends a key to a path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Closest returns the known name nearest to name by edit distance (ignoring
// case, '-' and '_' count as the same), or "" when none is near enough to be
// a likely typo: at most a third of the longer name's length (at least 1), or
// the only known key that contains name or is contained in it.
func Closest(name string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestD := "", -1
	for _, k := range known {
		d := distance(norm(name), norm(k))
		if bestD < 0 || d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD < 0 {
		return ""
	}
	limit := max(len(name), len(best)) / 3
	if limit < 1 {
		limit = 1
	}
	if bestD <= limit {
		return best
	}
	// A key that contains the other (min_interval for interval) is a likely
	// mix-up too, if only one known key does.
	var found []string
	for _, k := range known {
		if strings.Contains(norm(k), norm(name)) || strings.Contains(norm(name), norm(k)) {
			found = append(found, k)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// distance is the optimal string alignment distance: insertions, deletions,
// substitutions and transpositions of adjacent characters cost 1 each.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// fields maps the YAML key names of struct type t to its fields, the way
// go.yaml.in/yaml/v3 names them: the yaml tag's name, else the lowercased
// field name; "-" is skipped and ",inline" structs contribute their own keys.
func fields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range fields(ft) {
					m[k] = v
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		m[name] = f
	}
	return m
}
