package settings

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/lookup/persons/projector"
)

// parser parses a setting's value into Config.
type parser struct {
	arg    string // placeholder of the value in the help
	isBool bool
	set    func(c *Config, v string) error
}

// str parses any string into dst.
func str(dst func(c *Config) *string) parser {
	return parser{arg: "STRING", set: func(c *Config, v string) error { *dst(c) = v; return nil }}
}

// list parses a comma-separated list of non-empty words into dst (white
// space around each trimmed; "" is an empty list); what names the setting
// in errors.
func list(what string, dst func(c *Config) *[]string) parser {
	return parser{arg: "A,B,...", set: func(c *Config, v string) error {
		var out []string
		if strings.TrimSpace(v) != "" {
			for _, w := range strings.Split(v, ",") {
				w = strings.TrimSpace(w)
				if w == "" || strings.ContainsAny(w, " \t") {
					return fmt.Errorf("%s %q: want names separated by commas", what, v)
				}
				out = append(out, w)
			}
		}
		*dst(c) = out
		return nil
	}}
}

// maxLine bounds a line of the letterhead, in characters.
const maxLine = 200

// line parses one line of printable text of at most maxLine characters
// into dst, white space around it trimmed; what names the setting in
// errors.
func line(what string, dst func(c *Config) *string) parser {
	return parser{arg: "TEXT", set: func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if utf8.RuneCountInString(v) > maxLine || strings.ContainsFunc(v, unicode.IsControl) {
			return fmt.Errorf("%s %q: want one line of at most %d characters", what, v, maxLine)
		}
		*dst(c) = v
		return nil
	}}
}

// addressLines parses a postal address into Config.CoveredEntityAddress:
// at most 8 lines, separated by ";" or a new line, each a line as line
// takes it; empty lines are left out.
var addressLines = parser{arg: "LINE;LINE;...", set: func(c *Config, v string) error {
	var out []string
	for l := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ';' || r == '\n' }) {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if utf8.RuneCountInString(l) > maxLine || strings.ContainsFunc(l, unicode.IsControl) {
			return fmt.Errorf("covered entity address %q: want lines of at most %d characters, separated by ; or a new line", v, maxLine)
		}
		out = append(out, l)
	}
	if len(out) > 8 {
		return fmt.Errorf("covered entity address %q: %d lines, want at most 8", v, len(out))
	}
	c.CoveredEntityAddress = out
	return nil
}}

// oneOf parses one of the words valid into dst; what names the setting
// in errors.
func oneOf(what string, dst func(c *Config) *string, valid ...string) parser {
	return parser{arg: strings.Join(valid, "|"), set: func(c *Config, v string) error {
		for _, w := range valid {
			if v == w {
				*dst(c) = v
				return nil
			}
		}
		last := len(valid) - 1
		return fmt.Errorf("%s %q: want %s or %s", what, v, strings.Join(valid[:last], ", "), valid[last])
	}}
}

// boolean parses true or false into dst; what names the setting in errors.
func boolean(what string, dst func(c *Config) *bool) parser {
	return parser{isBool: true, set: func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s %q: want true or false", what, v)
		}
		*dst(c) = b
		return nil
	}}
}

// atLeast parses a whole number of at least least into dst; what names
// the setting in errors.
func atLeast(what string, least int, dst func(c *Config) *int) parser {
	return parser{arg: "N", set: func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < least {
			return fmt.Errorf("%s %q: want a whole number, %d or more", what, v, least)
		}
		*dst(c) = n
		return nil
	}}
}

// duration parses a duration into dst: positive, or 0 too when zeroOK;
// what names the setting and want says what is wanted in errors.
func duration(what, want string, zeroOK bool, dst func(c *Config) *time.Duration) parser {
	return parser{arg: "DURATION", set: func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d == 0 && !zeroOK) {
			return fmt.Errorf("%s %q: want %s", what, v, want)
		}
		*dst(c) = d
		return nil
	}}
}

// logLevel parses a slog level name.
var logLevel = parser{arg: "LEVEL", set: func(c *Config, v string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return fmt.Errorf("log level %q: want debug, info, warn or error", v)
	}
	c.LogLevel = v
	return nil
}}

// memoryBudget parses "auto" (Auto) or a size: 0, or at least
// projector.MinMemoryBudget.
var memoryBudget = parser{arg: "SIZE", set: func(c *Config, v string) error {
	if v == "auto" {
		c.MemoryBudget = AutoBudget
		return nil
	}
	n, err := humanize.ParseBytes(v)
	switch {
	case err != nil:
		return fmt.Errorf("memory budget %q: want auto or a size such as 192MiB or 1GiB", v)
	case n != 0 && n < projector.MinMemoryBudget:
		return fmt.Errorf("memory budget %q: want 0 or at least 32MiB", v)
	case n > 1<<50:
		return fmt.Errorf("memory budget %q: too large", v)
	}
	c.MemoryBudget = int64(n)
	return nil
}}
