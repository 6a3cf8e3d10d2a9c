package settings

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v4"
	"github.com/peterbourgon/ff/v4/ffhelp"
	"github.com/peterbourgon/ff/v4/ffval"
)

// ErrUsage marks an error in the command line or the environment: the
// program prints the usage and exits with status 2.
var ErrUsage = errors.New("usage")

// UsageError is an error in the command line or the environment: it
// matches ErrUsage.
type UsageError struct{ Err error }

func (e *UsageError) Error() string        { return e.Err.Error() }
func (e *UsageError) Is(target error) bool { return target == ErrUsage }
func (e *UsageError) Unwrap() error        { return e.Err }

// Command is one sub-command of lookupd: its flag set (package ff) holds
// the settings of the table that name the command (parsed into Config),
// then the flags of the command alone, which the command defines on Flags
// before Parse.
type Command struct {
	Flags    *ff.FlagSet
	Config   Config
	name     string // "serve", "dlq ls", ...
	help     string // paragraph for the command's --help
	settings []setting
	getenv   func(string) string
}

// NewCommand returns the command name, reading the settings of the table
// for in, with their defaults for in; getenv reads the environment.
func NewCommand(in Commands, name, help string, getenv func(string) string) (*Command, error) {
	c := &Command{Flags: ff.NewFlagSet("lookupd " + name), name: name, help: help, getenv: getenv}
	for _, s := range table {
		if s.in&in == 0 {
			if def := s.defaultIn(in); s.fixed&in != 0 && def != "" {
				if err := (&settingValue{cfg: &c.Config, p: s.parser}).Set(def); err != nil {
					return nil, fmt.Errorf("settings table: default of %s: %w", s.name, err)
				}
			}
			continue
		}
		v := &settingValue{cfg: &c.Config, p: s.parser}
		if def := s.defaultIn(in); def != "" {
			if err := v.Set(def); err != nil {
				return nil, fmt.Errorf("settings table: default of %s: %w", s.name, err)
			}
		}
		if _, err := c.Flags.AddFlag(ff.FlagConfig{LongName: s.name, Value: v, Placeholder: s.arg, NoPlaceholder: s.isBool,
			Usage: s.usageIn(in) + " (env " + envName(s.name) + ")"}); err != nil {
			return nil, fmt.Errorf("settings table: %w", err)
		}
		c.settings = append(c.settings, s)
	}
	return c, nil
}

// settingValue is the flag.Value of a setting: it parses into cfg and
// shows the text it was last set to.
type settingValue struct {
	cfg  *Config
	p    parser
	text string
}

func (v *settingValue) String() string { return v.text }
func (v *settingValue) IsBoolFlag() bool {
	return v.p.isBool
}
func (v *settingValue) Set(s string) error {
	if err := v.p.set(v.cfg, s); err != nil {
		return err
	}
	v.text = s
	return nil
}

// Parse parses args, then takes each setting that no flag set from its
// environment variable (through getenv; an empty one counts as unset). It
// returns ff.ErrHelp after printing the help to stdout when asked for it,
// and a usage error (after printing the usage to stderr) for a bad flag,
// a bad variable or a stray argument.
func (c *Command) Parse(args []string, stdout, stderr io.Writer) error {
	if err := c.Flags.Parse(args); err != nil {
		if errors.Is(err, ff.ErrHelp) {
			c.Usage(stdout)
			return ff.ErrHelp
		}
		return c.Refuse(stderr, err)
	}
	if rest := c.Flags.GetArgs(); len(rest) > 0 {
		return c.Refuse(stderr, fmt.Errorf("lookupd %s: unexpected argument %q", c.name, rest[0]))
	}
	for _, s := range c.settings {
		f, _ := c.Flags.GetFlag(s.name)
		if f.IsSet() {
			continue
		}
		if v := c.getenv(envName(s.name)); v != "" {
			if err := f.SetValue(v); err != nil {
				return c.Refuse(stderr, fmt.Errorf("%s: %w", envName(s.name), err))
			}
		}
	}
	return nil
}

// Given reports whether the flag name was set by the command line or by
// its environment variable.
func (c *Command) Given(name string) bool {
	f, ok := c.Flags.GetFlag(name)
	return ok && f.IsSet()
}

// Refuse writes the usage of the command to w and returns err as a usage
// error (exit status 2).
func (c *Command) Refuse(w io.Writer, err error) error {
	c.Usage(w)
	return &UsageError{err}
}

// Usage writes the help of the command: what it does and its flags, each
// setting with its environment variable and default.
func (c *Command) Usage(w io.Writer) {
	help := ffhelp.Help{
		ffhelp.NewSection("USAGE", "lookupd "+c.name+" [flags]"),
		ffhelp.NewUntitledSection(strings.TrimSpace(c.help)),
	}
	if n := 0; c.Flags.WalkFlags(func(ff.Flag) error { n++; return nil }) == nil && n > 0 {
		help = append(help, ffhelp.NewFlagsSection(c.Flags))
	}
	last := "-h, --help shows this help."
	if len(c.settings) > 0 {
		last += " A flag wins over its environment variable; an empty variable counts as unset."
	}
	_, _ = append(help, ffhelp.NewUntitledSection(last)).WriteTo(w)
}

// PositiveDuration defines on c's flags the duration flag name, of the
// command alone, that refuses a duration that is not positive.
func (c *Command) PositiveDuration(name string, def time.Duration, usage string) *time.Duration {
	v := &ffval.Value[time.Duration]{Default: def, ParseFunc: func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("--%s %s: want a positive duration", name, s)
		}
		return d, nil
	}}
	c.Flags.Value(0, name, v, usage)
	return v.GetPointer()
}
