package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// bareCommand is the first argument that makes loadtest the bare server:
// the parent runs itself with it, so that the bare server is a process of
// its own like lookupd (its CPU measured alike, no load generator in it).
const bareCommand = "bare-serve"

// runBare is "loadtest bare-serve": it reads the model of --model-dir
// (--people, --signers, --five-signers, --seed as the parent's), serves its captured
// answers over HTTP and, with --cert-file and --key-file, HTTPS, prints
// "BARE <http URL> <https URL or ->" on stdout, and serves until its
// standard input ends (the parent gone) or ctx ends.
func runBare(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(bareCommand, flag.ContinueOnError)
	var mo modelOptions
	fs.IntVar(&mo.people, "people", 0, "")
	fs.IntVar(&mo.signers, "signers", 0, "")
	fs.IntVar(&mo.five, "five-signers", 0, "")
	fs.Uint64Var(&mo.seed, "seed", 0, "")
	fs.StringVar(&mo.dir, "model-dir", "", "")
	certFile := fs.String("cert-file", "", "")
	keyFile := fs.String("key-file", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	man, ok, why := loadtest.Reusable(mo.dir, mo.key())
	if !ok {
		return fmt.Errorf("no complete model in %s: %s", mo.dir, why)
	}
	bodies, err := loadtest.ReadBodies(mo.dir)
	if err != nil {
		return err
	}
	pop, err := fixtures.NewShapedPopulation(mo.shape(), mo.seed)
	if err != nil {
		return err
	}
	h := loadtest.ModelHandler(pop, bodies, man.PersonHeader, man.SignersHeader)
	plain, err := loadtest.StartBareHandler(h, nil)
	if err != nil {
		return err
	}
	defer plain.Close()
	secure := "-"
	if *certFile != "" {
		pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return err
		}
		b, err := loadtest.StartBareHandler(h, &pair)
		if err != nil {
			return err
		}
		defer b.Close()
		secure = b.URL
	}
	fmt.Fprintf(stdout, "BARE %s %s\n", plain.URL, secure)
	loadtest.UntilStdinEnds(ctx, stdin)
	return nil
}

// bareChild is the bare server running as a child process.
type bareChild struct {
	*loadtest.Child
	url map[bool]string // base URL by TLS
}

// startBare starts this program as the bare server of m, with the run's
// certificate, and returns once it has said where it listens.
func startBare(ctx context.Context, o options, env *runEnv) (*bareChild, error) {
	mo := o.model
	c, urls, err := loadtest.StartChild(ctx, "bare server", "BARE", bareCommand, "--model-dir", mo.dir, "--people", fmt.Sprint(mo.people),
		"--signers", fmt.Sprint(mo.signers), "--five-signers", fmt.Sprint(mo.five), "--seed", fmt.Sprint(mo.seed), "--cert-file", env.cert.CertFile, "--key-file", env.cert.KeyFile)
	if err != nil {
		return nil, err
	}
	if len(urls) != 2 {
		return nil, fmt.Errorf("the bare server said %q, not where it listens (it ended: %s)", urls, loadtest.ErrText(c.Stop()))
	}
	return &bareChild{Child: c, url: map[bool]string{false: urls[0], true: urls[1]}}, nil
}
