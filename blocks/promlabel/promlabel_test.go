package promlabel

import (
	"reflect"
	"strings"
	"testing"
)

func TestSelectorMatchers(t *testing.T) {
	cases := []struct {
		sel  Selector
		want []Matcher
		err  string // "": accepted
		str  string // String(); "": the selector as given
	}{
		{sel: "", want: nil},
		{sel: "  ", want: nil, str: ""},
		{sel: `job="workflow-exporter"`, want: []Matcher{{"job", "=", "workflow-exporter"}}},
		{sel: `job="wf", env!="dev",topic=~"billing.*" , tenant!~"a|b"`, want: []Matcher{{"job", "=", "wf"}, {"env", "!=", "dev"}, {"topic", "=~", "billing.*"}, {"tenant", "!~", "a|b"}}},
		{sel: ` env="prod", `, want: []Matcher{{"env", "=", "prod"}}, str: `env="prod"`},
		{sel: `topic="a,b", x="say \"hi\", \\"`, want: []Matcher{{"topic", "=", "a,b"}, {"x", "=", `say "hi", \`}}},
		{sel: `topic=~"x{2}"`, want: []Matcher{{"topic", "=~", "x{2}"}}},
		{sel: `{job="x"}`, err: `give the matchers without braces: job="x"`},
		{sel: `env=prod`, err: `"env=prod" is not a label matcher: write a label name, one of = != =~ !~ and the value in double quotes, e.g. topic="billing.charge"`},
		{sel: `event_type`, err: `"event_type" is not a label matcher`},
		{sel: `job='x'`, err: `"job='x'" is not a label matcher`},
		{sel: `2x="a"`, err: `"2x=\"a\"" is not a label matcher`},
		{sel: `a="b",,c="d"`, err: `"" is not a label matcher`},
		{sel: `,`, err: `"" is not a label matcher`},
		{sel: `a="b`, err: `"a=\"b" is not a label matcher`},
		{sel: `a="\q"`, err: `"a=\"\\q\"": the value "\q" is not a valid double-quoted string`},
		{sel: `a=~"(x"`, err: `"a=~\"(x\"": the value is not a regular expression: error parsing regexp: missing closing ): ` + "`^(?:(x)$`"},
	}
	for _, tc := range cases {
		got, err := tc.sel.Matchers()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.sel, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.sel, err, tc.err)
		case tc.err == "" && !reflect.DeepEqual(got, tc.want):
			t.Errorf("%q: %+v, want %+v", tc.sel, got, tc.want)
		}
		if tc.err != "" {
			continue
		}
		str := tc.str
		if str == "" && strings.TrimSpace(string(tc.sel)) != "" {
			str = string(tc.sel)
		}
		if tc.sel.String() != str {
			t.Errorf("%q: String() = %q, want %q", tc.sel, tc.sel.String(), str)
		}
	}
	if got := Selector(`topic="a", engine=~"b|c"`).Labels(); !reflect.DeepEqual(got, []string{"topic", "engine"}) {
		t.Errorf("Labels() = %v", got)
	}
}

func TestLabelNames(t *testing.T) {
	for name, ok := range map[string]bool{"team": true, "_x": true, "k8s_cluster": true, "A1": true,
		"": false, "2x": false, "k8s-cluster": false, "a.b": false, "ä": false} {
		if ValidName(name) != ok || (CheckName(name) == nil) != ok {
			t.Errorf("%q: ValidName %v, CheckName %v; want valid %v", name, ValidName(name), CheckName(name), ok)
		}
	}
	if err := CheckName("k8s-cluster"); err == nil || err.Error() != `"k8s-cluster" is not a label name (letters, digits and _, not starting with a digit)` {
		t.Errorf("CheckName: %v", err)
	}
}
