package main

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

// errUsage marks an error in the command line or the environment: the
// program prints the usage and exits with status 2.
var errUsage = errors.New("usage")

type usageError struct{ err error }

func (e *usageError) Error() string        { return e.err.Error() }
func (e *usageError) Is(target error) bool { return target == errUsage }
func (e *usageError) Unwrap() error        { return e.err }

// command is one sub-command of lookupd: its flag set (package ff) holds
// the settings of the table that name the command (cfg), then the flags
// of the command alone, which the command defines on fs before parse.
type command struct {
	name     string // "serve", "dlq ls", ...
	help     string // paragraph for the command's --help
	in       cmdSet
	fs       *ff.FlagSet
	cfg      config
	settings []setting
	getenv   func(string) string
}

// newCommand returns the command name, reading the settings of the table
// for in, with their defaults for in.
func newCommand(in cmdSet, name, help string, getenv func(string) string) (*command, error) {
	c := &command{name: name, help: help, in: in, fs: ff.NewFlagSet("lookupd " + name), getenv: getenv}
	for _, s := range settings {
		if s.in&in == 0 {
			continue
		}
		v := &settingValue{cfg: &c.cfg, p: s.parser}
		if def := s.defaultIn(in); def != "" {
			if err := v.Set(def); err != nil {
				return nil, fmt.Errorf("settings table: default of %s: %w", s.name, err)
			}
		}
		if _, err := c.fs.AddFlag(ff.FlagConfig{LongName: s.name, Value: v, Placeholder: s.arg, NoPlaceholder: s.isBool,
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
	cfg  *config
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

// parse parses args, then takes each setting that no flag set from its
// environment variable (through getenv; an empty one counts as unset). It
// returns ff.ErrHelp after printing the help to stdout when asked for it,
// and a usage error (after printing the usage to stderr) for a bad flag,
// a bad variable or a stray argument.
func (c *command) parse(args []string, stdout, stderr io.Writer) error {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, ff.ErrHelp) {
			c.usage(stdout)
			return ff.ErrHelp
		}
		return c.refuse(stderr, err)
	}
	if rest := c.fs.GetArgs(); len(rest) > 0 {
		return c.refuse(stderr, fmt.Errorf("lookupd %s: unexpected argument %q", c.name, rest[0]))
	}
	for _, s := range c.settings {
		f, _ := c.fs.GetFlag(s.name)
		if f.IsSet() {
			continue
		}
		if v := c.getenv(envName(s.name)); v != "" {
			if err := f.SetValue(v); err != nil {
				return c.refuse(stderr, fmt.Errorf("%s: %w", envName(s.name), err))
			}
		}
	}
	return nil
}

// given reports whether the flag name was set by the command line or by
// its environment variable.
func (c *command) given(name string) bool {
	f, ok := c.fs.GetFlag(name)
	return ok && f.IsSet()
}

// refuse writes the usage of the command to w and returns err as a usage
// error (exit status 2).
func (c *command) refuse(w io.Writer, err error) error {
	c.usage(w)
	return &usageError{err}
}

// usage writes the help of the command: what it does and its flags, each
// setting with its environment variable and default.
func (c *command) usage(w io.Writer) {
	help := ffhelp.Help{
		ffhelp.NewSection("USAGE", "lookupd "+c.name+" [flags]"),
		ffhelp.NewUntitledSection(strings.TrimSpace(c.help)),
	}
	if n := 0; c.fs.WalkFlags(func(ff.Flag) error { n++; return nil }) == nil && n > 0 {
		help = append(help, ffhelp.NewFlagsSection(c.fs))
	}
	last := "-h, --help shows this help."
	if len(c.settings) > 0 {
		last += " A flag wins over its environment variable; an empty variable counts as unset."
	}
	_, _ = append(help, ffhelp.NewUntitledSection(last)).WriteTo(w)
}

// positiveDuration defines on fs the duration flag name, of a command
// alone, that refuses a duration that is not positive.
func positiveDuration(fs *ff.FlagSet, name string, def time.Duration, usage string) *time.Duration {
	v := &ffval.Value[time.Duration]{Default: def, ParseFunc: func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return 0, fmt.Errorf("--%s %s: want a positive duration", name, s)
		}
		return d, nil
	}}
	fs.Value(0, name, v, usage)
	return v.GetPointer()
}
